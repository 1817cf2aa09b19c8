"""The ``ragreview`` command: a thin click layer over the library."""

from __future__ import annotations

import click

from .. import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ragreview")
def cli() -> None:
    """See and fix the labels behind LLM-judged RAG evaluations.

    PATH is an input file (imported on first use into <stem>.ragreview.db beside it)
    or a .ragreview.db file.
    """


# Each module registers its commands on ``cli``.
from . import audit, data, judge, metrics, open_cmd, review, serve  # noqa: E402,F401
