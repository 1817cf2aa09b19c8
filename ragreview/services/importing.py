"""Importing an input file into a review database: what ``ragreview import``/``open``
and ``ragreview.open()`` share (the CLI adds its progress bars around these)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .. import formats
from ..core.errors import InputError, InputWarning
from ..core.import_items import ImportItem, Unchanged
from ..formats.base import KnownLines, ReadContext
from ..store import importer
from ..store import records as store_records
from ..store import settings as store_settings
from ..store.import_summary import ImportSummary
from ..store.preparing import Prepared
from . import import_pipeline

if TYPE_CHECKING:
    import sqlite_utils

Progress = Callable[[int], None]


def invalid_count(n: int) -> str:
    """ "1 invalid record", "2 invalid records": how the CLI and the API say it."""
    return f"{n} invalid record{'' if n == 1 else 's'}"


def invalid_records(
    path: Path,
    fmt: str | None = None,
    mapping: dict[str, str] | None = None,
    on_bytes: Progress | None = None,
) -> list[InputError]:
    """Every per-record error of an input file, reading it once without keeping records
    (the ``--strict`` pass, made before anything is written). Raises InputError for a
    file that cannot be read at all (missing, unreadable, empty, unknown format)."""
    source = formats.open_source(path, fmt, mapping, strict=True)
    stream = source.records(ReadContext(on_bytes=on_bytes))
    return [e for e in stream if isinstance(e, InputError) and not isinstance(e, InputWarning)]


def store(
    db: sqlite_utils.Database,
    source: formats.Source,
    dataset: str,
    *,
    on_bytes: Progress | None = None,
    on_records: Progress | None = None,
    parallel: bool = True,
) -> tuple[ImportSummary, list[InputError]]:
    """Store the valid records of ``source`` (``formats.open_source``) in one
    transaction, collecting the errors (warnings go to ``summary.warnings``: every
    record they speak of was imported). Records stream through: a 100,000-record file
    is never held in memory. ``on_bytes`` is told as the file is read. ``parallel``: a
    large file is prepared by a worker process (spawned: scripts that import at top
    level, without a ``__main__`` guard, must not)."""
    path, fmt, mapping = source.path, source.fmt, source.mapping
    errors: list[InputError] = []
    warnings: list[InputWarning] = []

    def valid(
        entries: Iterable[ImportItem | Prepared | Unchanged | InputError],
    ) -> Iterator[ImportItem | Prepared | Unchanged]:
        for entry in entries:
            if isinstance(entry, InputWarning):
                warnings.append(entry)
            elif isinstance(entry, InputError):
                errors.append(entry)
            else:
                yield entry

    document = formats.source_document(fmt, path, mapping=mapping)
    # a re-import leaves the lines it stored before unparsed (a mapping changes records)
    known = {} if mapping is not None else store_records.known_lines(db, dataset, fmt, path.name)
    skip = KnownLines(known) if known else None
    settings = None
    stream: Iterable[ImportItem | Prepared | Unchanged | InputError]
    # (a re-import into the dataset the file came from reads here: its unchanged
    # lines are only hashed, which costs less than starting a worker)
    if parallel and mapping is None and skip is None and import_pipeline.worth_it(path):
        settings = store_settings.get_all(db, dataset)
        stream = import_pipeline.prepared(path, fmt, settings, on_bytes)
    else:
        stream = source.records(ReadContext(on_bytes=on_bytes, known=skip))
    summary = importer.import_records(
        db,
        dataset,
        fmt,
        str(path),
        valid(stream),
        on_progress=on_records,
        source_document=document,
        prepared_with=settings,
    )
    summary.warnings = warnings
    for rid, first, again in summary.repeated:
        message = f"{rid!r} repeats (first on line {first}): not imported"
        errors.append(InputError(str(path), again, "id", message))
    return summary, errors
