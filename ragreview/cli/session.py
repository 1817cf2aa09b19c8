"""Opening the DB behind a PATH argument, importing the input first when needed."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..core.errors import InputError
from ..core.record import ImportItem
from ..core.safe_text import printable
from ..store import open_database
from ..store import records as store_records
from ..store.records import ImportSummary
from .common import Target, file_progress, resolve

# The format adapters and the import pipeline are imported where a file is imported:
# a command on an imported DB (`label`, `mark`) never needs them (start-up, issue 27).
if TYPE_CHECKING:
    import sqlite_utils

    from ..store.importer import Prepared


@dataclass
class Opened:
    db: sqlite_utils.Database
    dataset: str
    target: Target


def check_file(
    path: Path, fmt: str | None = None, mapping: dict[str, str] | None = None
) -> list[InputError]:
    """``importing.invalid_records`` with a progress bar."""
    from ..services import importing

    with file_progress("checking", path, records=False) as (on_bytes, _):
        return importing.invalid_records(path, fmt, mapping, on_bytes)


def store_stream(
    db: sqlite_utils.Database,
    path: Path,
    dataset: str,
    fmt: str,
    stream: Iterable[ImportItem | Prepared | InputError],
    mapping: dict[str, str] | None = None,
) -> tuple[ImportSummary, list[InputError]]:
    """``importing.store`` with progress bars; its warnings are shown once the bars are
    gone."""
    from ..services import importing

    with file_progress("reading", path) as (on_bytes, on_records):
        summary, errors = importing.store(
            db, path, dataset, fmt, stream, mapping, on_bytes=on_bytes, on_records=on_records
        )
    for warning in summary.warnings:
        click.echo(printable(f"warning: {warning}", one_line=True), err=True)
    return summary, errors


def import_target(
    target: Target,
    read: tuple[str, Iterator[ImportItem | InputError]],
    mapping: dict[str, str] | None = None,
) -> tuple[sqlite_utils.Database, ImportSummary, list[InputError]]:
    """Import the target's input file, as opened by ``formats.read``, into its DB,
    creating the DB if needed. Returns the open DB too."""
    from .. import formats
    from ..store.db import building

    assert target.input_path is not None and target.dataset is not None
    path, dataset = target.input_path, target.dataset
    fmt, stream = read
    if not target.db_path.exists():
        try:
            with building(target.db_path) as new:
                summary, errors = store_stream(new, path, dataset, fmt, stream, mapping)
            return open_database(target.db_path), summary, errors
        except FileExistsError:  # another process created it meanwhile: import into theirs
            _fmt, stream = formats.read(path, fmt, mapping)  # (the first read was used up)
    database = open_database(target.db_path)
    summary, errors = store_stream(database, path, dataset, fmt, stream, mapping)
    return database, summary, errors


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
    """The DB for PATH; a source file not yet imported is imported first.

    ``read_only`` (commands that only read) opens an existing DB that cannot be written
    (``store.db.connect_read_only``). The DB is closed when the command ends (the TUI's
    too), not left to the interpreter's exit: the last connection's close folds the WAL
    into the file and removes the ``-wal`` and ``-shm`` files, so the .db file alone holds
    every label (one copied without its -wal would otherwise miss the last ones)."""
    opened = _open(path, db, dataset, mapping, read_only)
    context = click.get_current_context(silent=True)
    if context is not None:
        context.call_on_close(opened.db.conn.close)
    return opened


def _open(
    path: str, db: str | None, dataset: str | None, mapping: dict[str, str] | None, read_only: bool
) -> Opened:
    target = resolve(path, db, dataset)
    if target.input_path is not None:
        assert target.dataset is not None
        if target.db_path.exists():
            database = open_database(target.db_path, read_only=read_only)
            if target.dataset in [d["name"] for d in store_records.datasets(database)]:
                return Opened(database, target.dataset, target)
            database.conn.close()
        # read first: an unreadable file leaves no empty DB behind
        from .. import formats

        database, summary, errors = import_target(
            target, formats.read(target.input_path, None, mapping), mapping
        )
        report_errors(errors)
        if errors:
            click.echo(f"imported {summary.total} records; {len(errors)} had errors", err=True)
        return Opened(database, target.dataset, target)
    database = open_database(target.db_path, read_only=read_only)
    names = [d["name"] for d in store_records.datasets(database)]
    if target.dataset is not None:
        if target.dataset not in names:
            raise click.ClickException(f"{target.db_path}: no dataset {target.dataset!r}")
        return Opened(database, target.dataset, target)
    if not names:
        raise click.ClickException(f"{target.db_path}: the database holds no dataset yet")
    if len(names) > 1:
        raise click.ClickException(
            f"{target.db_path} holds several datasets "
            f"({', '.join(names)}): choose one with --dataset"
        )
    return Opened(database, names[0], target)
