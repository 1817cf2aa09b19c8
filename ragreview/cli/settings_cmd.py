"""A dataset's settings from the command line: ``ragreview settings``."""

from __future__ import annotations

import json

import click

from ..core.labels import parse_value_text
from ..core.safe_text import printable
from ..services import settings as settings_service
from ..store import records as store_records
from . import cli
from .common import progress, user_errors
from .options import dataset_option, db_option
from .session import open_target


@cli.command()
@click.argument("path")
@click.argument("assignments", nargs=-1, metavar="[NAME=VALUE ...]")
@db_option
@dataset_option
def settings(path: str, assignments: tuple[str, ...], db: str | None, dataset: str | None) -> None:
    """Show or change the dataset's settings (e.g. trace.variant=length longform.k=64)."""
    with user_errors():
        opened = open_target(path, db, dataset)
        for assignment in assignments:
            name, sep, value = assignment.partition("=")
            if not sep:
                raise click.UsageError(f"expected NAME=VALUE, got {assignment!r}")
            total = store_records.counts(opened.db, opened.dataset)
            with progress(f"recomputing metrics for {name.strip()}", sum(total.values())) as step:
                settings_service.change(
                    opened.db,
                    opened.dataset,
                    name.strip(),
                    parse_value_text(value.strip()),
                    on_progress=step,
                )
        every = settings_service.current(opened.db, opened.dataset)
        for name, value in every.items():
            shown = json.dumps(value) if not isinstance(value, str) else value
            click.echo(printable(f"{name}={shown}", one_line=True))
