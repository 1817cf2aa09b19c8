"""Writing a dataset out with its reviewed labels: what ``ragreview export`` and the
TUI's ``ctrl+e`` share, so both write byte-identical files for the same choice."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .. import formats
from ..core.errors import RagreviewError
from ..formats import csv_export
from ..store import browse, item_edits
from ..store import records as store_records
from ..store import settings as store_settings

if TYPE_CHECKING:  # sqlite_utils imports click; the TUI worker needs no CLI
    import sqlite_utils

AS_CHOICES = ("source", "ragreview", "csv")


def _dataset_row(db: sqlite_utils.Database, dataset: str) -> dict[str, Any]:
    for row in store_records.datasets(db):
        if row["name"] == dataset:
            return row
    raise RagreviewError(f"no dataset {dataset!r}")


def resolve_format(db: sqlite_utils.Database, dataset: str, as_: str) -> str:
    """The writer's name for ``--as`` (``source`` is the format the dataset came in)."""
    fmt = _dataset_row(db, dataset)["format"] if as_ == "source" else as_
    if fmt != "csv" and fmt not in formats.REGISTRY:
        raise RagreviewError(f"export as {fmt!r} is not supported")
    return fmt


def source_suffix(db: sqlite_utils.Database, dataset: str) -> str:
    """The extension of the file the dataset was imported from (``.jsonl`` if unknown)."""
    source = _dataset_row(db, dataset)["source_path"]
    return (Path(source).suffix if source else "") or ".jsonl"


def total(db: sqlite_utils.Database, dataset: str) -> int:
    return browse.total_count(db, dataset)


def write(
    db: sqlite_utils.Database,
    dataset: str,
    fmt: str,
    out: TextIO,
    *,
    reviewed_only: bool = False,
    on_record: Callable[[], None] | None = None,
) -> int:
    """Write ``dataset`` to ``out`` as ``fmt`` (from ``resolve_format``); the count.

    ``on_record`` is called once per record read (for a progress bar)."""
    if fmt not in ("csv", "ragreview"):
        changed = item_edits.edited(db, dataset)
        if changed:  # the source file's own fact/statement lists cannot hold them
            shown = ", ".join(changed[:5]) + (" …" if len(changed) > 5 else "")
            raise RagreviewError(
                f"{len(changed)} records have edited facts or statements that the {fmt} "
                f"format cannot hold ({shown}); export them with --as ragreview"
            )
    writer = csv_export.write if fmt == "csv" else formats.adapter(fmt).write
    config = store_settings.get_all(db, dataset)
    # what the writers need beyond the settings (whole-file formats, subsets)
    writer_config = {
        **config,
        "source.document": store_records.source_document(db, dataset),
        "export.subset": reviewed_only,
    }
    status = "reviewed" if reviewed_only else None
    items: Any = store_records.iterate(db, dataset, status=status, lazy_judge=True)
    if reviewed_only and fmt == "ragreview":  # a gold set says who reviewed it, how
        from ..store.review_queries import with_gold_metadata

        items = with_gold_metadata(items, config)
    if on_record is not None:
        items = _counted(items, on_record)
    return writer(items, out, writer_config)


def _counted(items, on_record: Callable[[], None]) -> Iterator[Any]:
    for item in items:
        on_record()
        yield item


def write_file(db: sqlite_utils.Database, dataset: str, fmt: str, path: Path) -> int:
    """``write`` to ``path`` atomically (a temp file renamed over it): a reader never sees
    half a file, and a failed export leaves the previous one in place."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="") as fh:
            count = write(db, dataset, fmt, fh)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return count


def reviewed_path(db_path: str | Path, dataset: str, suffix: str) -> Path:
    """``<dataset>.reviewed.<ext>`` beside the DB."""
    return Path(db_path).with_name(f"{dataset}.reviewed{suffix}")
