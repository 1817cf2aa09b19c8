"""The ``ragreview`` command: a thin click layer over the library."""

from __future__ import annotations

import sqlite3
from typing import Any

import click

from .. import __version__


class Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        """A damaged, read-only or full database is one line and exit 1 from every
        command, wherever SQLite notices it (opening, reading a damaged page, a commit)."""
        from ..store.db import explain, is_storage_error
        from .common import DB_KEY

        try:
            return super().invoke(ctx)
        except sqlite3.DatabaseError as err:
            if not is_storage_error(err):
                raise
            path = ctx.meta.get(DB_KEY, "the review database")
            raise click.ClickException(str(explain(err, path))) from None


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ragreview")
def cli() -> None:
    """See and fix the labels behind LLM-judged RAG evaluations.

    PATH is an input file (imported on first use into <stem>.ragreview.db beside it)
    or a .ragreview.db file.
    """


# Each module registers its commands on ``cli``.
from . import (  # noqa: E402,F401
    align_cmd,
    audit,
    data,
    guidelines_cmd,
    judge,
    metrics,
    open_cmd,
    queue_cmd,
    review,
    runs,
    serve,
)
