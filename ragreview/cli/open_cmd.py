"""``ragreview open``: import if needed, then the review TUI."""

from __future__ import annotations

import click

from . import cli
from .common import default_reviewer, user_errors
from .options import dataset_option, db_option, map_option, reviewer_option
from .session import open_target


@cli.command("open")
@click.argument("path")
@db_option
@dataset_option
@reviewer_option
@click.option("--blind", is_flag=True, help="Hide the judge's labels until revealed.")
@map_option
def open_cmd(
    path: str,
    db: str | None,
    dataset: str | None,
    reviewer: str | None,
    blind: bool,
    map_spec: str | None,
) -> None:
    """Review PATH in the terminal UI."""
    with user_errors():
        from ..formats.mapped import parse_spec

        mapping = None if map_spec is None else parse_spec(map_spec)
        opened = open_target(path, db, dataset, mapping)
    # The import (with its progress bar) is done; only now start the full-screen app.
    from ..tui.app import run

    run(opened.db, opened.dataset, reviewer or default_reviewer(), blind=blind)
