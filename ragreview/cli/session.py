"""Opening the DB behind a PATH argument, importing the input first when needed: the
open use case (``services.opening``) with the CLI's progress bars and messages."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..core.errors import InputError
from ..core.safe_text import printable
from ..services import opening
from ..services.opening import Opened, Target
from .common import file_progress, resolve, user_errors

if TYPE_CHECKING:
    import sqlite_utils

    from ..store.import_summary import ImportSummary

__all__ = ["Opened", "check_file", "import_target", "open_target", "report_errors"]


def check_file(
    path: Path, fmt: str | None = None, mapping: dict[str, str] | None = None
) -> list[InputError]:
    """``importing.invalid_records`` with a progress bar."""
    from ..services import importing

    with file_progress("checking", path, records=False) as (on_bytes, _):
        return importing.invalid_records(path, fmt, mapping, on_bytes)


def _reading(path: Path):
    return file_progress("reading", path)


def import_target(
    target: Target,
    fmt: str | None = None,
    mapping: dict[str, str] | None = None,
    *,
    strict: bool = False,
) -> tuple[sqlite_utils.Database, ImportSummary, list[InputError]]:
    """``opening.import_file`` with progress bars; its warnings are shown once the bars
    are gone. Returns the open DB too."""
    database, summary, errors = opening.import_file(
        target, fmt, mapping, strict=strict, reading=_reading, checking=_checking(fmt, mapping)
    )
    _warn(summary)
    return database, summary, errors


def _checking(fmt: str | None, mapping: dict[str, str] | None):
    return lambda path: check_file(path, fmt, mapping)


def _warn(summary: ImportSummary | None) -> None:
    for warning in summary.warnings if summary else ():
        click.echo(printable(f"warning: {warning}", one_line=True), err=True)


def report_errors(errors: list[InputError], limit: int = 20) -> None:
    for err in errors[:limit]:
        click.echo(printable(f"error: {err}", one_line=True), err=True)
    if len(errors) > limit:
        click.echo(f"… and {len(errors) - limit} more errors", err=True)


def open_target(
    path: str,
    db: str | None = None,
    dataset: str | None = None,
    mapping: dict[str, str] | None = None,
    *,
    read_only: bool = False,
) -> Opened:
    """The DB for PATH (``opening.open_dataset``); a source file not yet imported is
    imported first, with progress bars and its errors reported.

    ``read_only`` (commands that only read) opens an existing DB that cannot be written
    (``store.db.connect_read_only``). The DB is closed when the command ends (the TUI's
    too), not left to the interpreter's exit: the last connection's close folds the WAL
    into the file and removes the ``-wal`` and ``-shm`` files, so the .db file alone holds
    every label (one copied without its -wal would otherwise miss the last ones)."""
    resolve(path, db, dataset)  # the DB named in a storage error's line (remember_db)
    with user_errors():
        opened = opening.open_dataset(
            path, db, dataset, mapping=mapping, read_only=read_only, reading=_reading
        )
    context = click.get_current_context(silent=True)
    if context is not None:
        context.call_on_close(opened.db.conn.close)
    if opened.summary is not None:  # imported just now
        _warn(opened.summary)
        report_errors(opened.errors)
        if opened.errors:
            total = opened.summary.total
            click.echo(f"imported {total} records; {len(opened.errors)} had errors", err=True)
    return opened
