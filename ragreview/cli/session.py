"""Opening the DB behind a PATH argument, importing the input first when needed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click
import sqlite_utils

from .. import formats
from ..core.errors import InputError
from ..core.record import ImportItem
from ..store import open_database
from ..store import records as store_records
from ..store.records import ImportSummary
from .common import Target, progress, resolve


@dataclass
class Opened:
    db: sqlite_utils.Database
    dataset: str
    target: Target


def read_file(path: Path, fmt: str | None = None) -> tuple[str, list[ImportItem], list[InputError]]:
    """(format, valid items, per-record errors). Raises InputError for a file that cannot
    be read at all (missing, unreadable, empty, unknown format)."""
    fmt, stream = formats.read(path, fmt)
    items: list[ImportItem] = []
    errors: list[InputError] = []
    for entry in stream:
        (errors if isinstance(entry, InputError) else items).append(entry)  # type: ignore[arg-type]
    return fmt, items, errors


def store_items(
    db: sqlite_utils.Database, path: Path, dataset: str, fmt: str, items: list[ImportItem]
) -> ImportSummary:
    with progress(f"importing {path.name}", len(items)) as advance:
        return store_records.import_records(db, dataset, fmt, str(path), items, on_progress=advance)


def import_file(
    db: sqlite_utils.Database,
    path: Path,
    dataset: str,
    fmt: str | None = None,
    strict: bool = False,
) -> tuple[ImportSummary, list[InputError]]:
    """Read and store one input file. Errors are collected; with ``strict`` nothing is
    written when there is any."""
    fmt, items, errors = read_file(path, fmt)
    if strict and errors:
        return ImportSummary(), errors
    return store_items(db, path, dataset, fmt, items), errors


def report_errors(errors: list[InputError], limit: int = 20) -> None:
    for err in errors[:limit]:
        click.echo(f"error: {err}", err=True)
    if len(errors) > limit:
        click.echo(f"… and {len(errors) - limit} more errors", err=True)


def open_target(path: str, db: str | None = None, dataset: str | None = None) -> Opened:
    """The DB for PATH; a source file not yet imported is imported first."""
    target = resolve(path, db, dataset)
    read = None
    if target.input_path is not None and not target.db_path.exists():
        read = read_file(target.input_path)  # an unreadable file leaves no empty DB behind
    database = open_database(target.db_path)
    names = [d["name"] for d in store_records.datasets(database)]
    if target.input_path is not None:
        assert target.dataset is not None
        if target.dataset not in names:
            fmt, items, errors = read or read_file(target.input_path)
            summary = store_items(database, target.input_path, target.dataset, fmt, items)
            report_errors(errors)
            if errors:
                click.echo(f"imported {summary.total} records; {len(errors)} had errors", err=True)
        return Opened(database, target.dataset, target)
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
