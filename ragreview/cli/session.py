"""Opening the DB behind a PATH argument, importing the input first when needed."""

from __future__ import annotations

from collections.abc import Iterator
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


class _StrictAbort(Exception):
    """Raised inside the import transaction to roll it back (``--strict``)."""


def import_file(
    db: sqlite_utils.Database,
    path: Path,
    dataset: str,
    fmt: str | None = None,
    strict: bool = False,
) -> tuple[ImportSummary, list[InputError]]:
    """Read and store one input file, streaming records into one transaction. Errors
    are collected; with ``strict`` the transaction is rolled back when there is any."""
    fmt, stream = formats.read(path, fmt)
    errors: list[InputError] = []

    def valid() -> Iterator[ImportItem]:
        for entry in stream:
            if isinstance(entry, InputError):
                errors.append(entry)
            elif not (strict and errors):  # after a strict error, only collect errors
                yield entry
        if strict and errors:
            raise _StrictAbort

    document = formats.source_document(fmt, path)
    try:
        with progress(f"importing {path.name}", None) as advance:
            summary = store_records.import_records(
                db, dataset, fmt, str(path), valid(), on_progress=advance, source_document=document
            )
    except _StrictAbort:
        return ImportSummary(), errors
    return summary, errors


def report_errors(errors: list[InputError], limit: int = 20) -> None:
    for err in errors[:limit]:
        click.echo(f"error: {err}", err=True)
    if len(errors) > limit:
        click.echo(f"… and {len(errors) - limit} more errors", err=True)


def open_target(path: str, db: str | None = None, dataset: str | None = None) -> Opened:
    """The DB for PATH; a source file not yet imported is imported first."""
    target = resolve(path, db, dataset)
    database = open_database(target.db_path)
    names = [d["name"] for d in store_records.datasets(database)]
    if target.input_path is not None:
        assert target.dataset is not None
        if target.dataset not in names:
            summary, errors = import_file(database, target.input_path, target.dataset)
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
