"""Writing a dataset out with its reviewed labels: what ``ragreview export`` and the
TUI's ``ctrl+e`` share, so both write byte-identical files for the same choice."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .. import formats
from ..core.errors import RagreviewError
from ..core.labels import effective
from ..formats import csv_export
from ..formats.common import changed, lost_labels
from ..formats.scores import record_values
from ..store import browse, item_edits, metric_rows, metric_table
from ..store import records as store_records
from ..store import settings as store_settings

if TYPE_CHECKING:  # sqlite_utils imports click; the TUI worker needs no CLI
    import sqlite_utils

DISAGREEMENTS = "disagreements"  # the overridden items, not the records (disagreements.py)
# corrections in other tools' shapes (loop_exports.py): items too, not records
LOOP_FORMATS = ("ragas-annotation", "mlflow-assessments", "fewshot")
ITEM_FORMATS = (DISAGREEMENTS, *LOOP_FORMATS)
AS_CHOICES = ("source", "ragreview", "csv", "parquet", *ITEM_FORMATS)


class LossError(RagreviewError):
    """The source format cannot hold some labels: the export refuses before writing."""


def _dataset_row(db: sqlite_utils.Database, dataset: str) -> dict[str, Any]:
    for row in store_records.datasets(db):
        if row["name"] == dataset:
            return row
    raise RagreviewError(f"no dataset {dataset!r}")


def resolve_format(db: sqlite_utils.Database, dataset: str, as_: str) -> str:
    """The writer's name for ``--as`` (``source`` is the format the dataset came in)."""
    fmt = _dataset_row(db, dataset)["format"] if as_ == "source" else as_
    if fmt not in ("csv", *ITEM_FORMATS) and fmt not in formats.REGISTRY:
        raise RagreviewError(f"export as {fmt!r} is not supported")
    return fmt


def source_suffix(db: sqlite_utils.Database, dataset: str) -> str:
    """The extension of the file the dataset was imported from (``.jsonl`` if unknown)."""
    source = _dataset_row(db, dataset)["source_path"]
    return (Path(source).suffix if source else "") or ".jsonl"


def total(db: sqlite_utils.Database, dataset: str) -> int:
    return browse.total_count(db, dataset)


def _writer_config(
    db: sqlite_utils.Database, dataset: str, fmt: str, reviewed_only: bool, config: dict[str, Any]
) -> dict[str, Any]:
    # the settings, and what the writers need beyond them (whole-file formats, subsets)
    writer_config = {
        **config,
        "source.document": store_records.source_document(db, dataset),
        "export.subset": reviewed_only,
    }
    if getattr(formats.REGISTRY.get(fmt), "NEEDS_AUTHORS", False):
        # the writer names who made each override (InspectorRAGet)
        from ..store import reviewer_layers

        writer_config["export.authors"] = reviewer_layers.authors(db, dataset)
    return writer_config


def lost(
    db: sqlite_utils.Database, dataset: str, fmt: str, *, reviewed_only: bool = False
) -> dict[str, list[str]]:
    """Label name -> ids of the records whose label a ``fmt`` export would not hold:
    each record with overrides is written the way the export writes it and read back
    the way an import reads it, and what does not come back is lost (docs/formats.md).
    Empty for ragreview's own format and CSV, which hold every label."""
    read_back = getattr(formats.REGISTRY.get(fmt), "read_back", None)
    if read_back is None:
        return {}
    config = _writer_config(db, dataset, fmt, reviewed_only, store_settings.get_all(db, dataset))
    status = "reviewed" if reviewed_only else None
    out: dict[str, list[str]] = {}
    for item in store_records.overridden(db, dataset, status=status):
        if item.source is None or not changed(item.judge, item.human):
            continue  # no source: the writer says so; no change: written as read
        for name in sorted(lost_labels(effective(item.judge, item.human), read_back(item, config))):
            out.setdefault(name, []).append(item.id)
    return dict(sorted(out.items()))


def check_loss(
    db: sqlite_utils.Database, dataset: str, fmt: str, *, reviewed_only: bool = False
) -> dict[str, list[str]]:
    """Refuse (``LossError``, one message) when a ``fmt`` export would lose labels."""
    found = lost(db, dataset, fmt, reviewed_only=reviewed_only)
    if found:
        raise LossError(
            f"the {fmt} format cannot hold these reviewed labels: {describe_loss(found)}; "
            "nothing was written. Export with --as ragreview to keep every label, "
            "or pass --allow-loss to write the source format without them"
        )
    return found


def describe_loss(found: dict[str, list[str]], shown: int = 5) -> str:
    """``name (n records: id, id, …)`` for each label, in one line."""
    parts = []
    for name, ids in found.items():
        listed = ", ".join(repr(i) for i in ids[:shown]) + (", …" if len(ids) > shown else "")
        parts.append(f"{name} ({len(ids)} record{'s' if len(ids) != 1 else ''}: {listed})")
    return "; ".join(parts)


def write(
    db: sqlite_utils.Database,
    dataset: str,
    fmt: str,
    out: TextIO,
    *,
    reviewed_only: bool = False,
    allow_loss: bool = False,
    on_record: Callable[[], None] | None = None,
) -> int:
    """Write ``dataset`` to ``out`` as ``fmt`` (from ``resolve_format``); the count.
    Refuses before writing anything when the format would lose labels (``check_loss``),
    unless ``allow_loss``.

    ``on_record`` is called once per record read (for a progress bar)."""
    if fmt == DISAGREEMENTS:  # items, not records: nothing of a format to lose
        from . import disagreements

        return disagreements.write(db, dataset, out, reviewed_only=reviewed_only)
    if fmt in LOOP_FORMATS:
        from . import loop_exports

        return loop_exports.write(db, dataset, fmt, out, reviewed_only=reviewed_only)
    if fmt not in ("csv", "ragreview"):
        changed = item_edits.edited(db, dataset)
        if changed:  # the source file's own fact/statement lists cannot hold them
            shown = ", ".join(changed[:5]) + (" …" if len(changed) > 5 else "")
            raise RagreviewError(
                f"{len(changed)} records have edited facts or statements that the {fmt} "
                f"format cannot hold ({shown}); export them with --as ragreview"
            )
    if not allow_loss:
        check_loss(db, dataset, fmt, reviewed_only=reviewed_only)
    status = "reviewed" if reviewed_only else None
    if fmt == "csv":
        return _write_csv(db, dataset, out, status, on_record)
    writer = formats.adapter(fmt).write
    config = store_settings.get_all(db, dataset)
    writer_config = _writer_config(db, dataset, fmt, reviewed_only, config)
    items: Any = store_records.iterate(db, dataset, status=status, lazy_judge=True)
    if reviewed_only and fmt == "ragreview":  # a gold set says who reviewed it, how
        from ..store.review_queries import with_gold_metadata

        items = with_gold_metadata(items, config)
    if on_record is not None:
        items = _counted(items, on_record)
    return writer(items, out, writer_config)


def _write_csv(
    db: sqlite_utils.Database,
    dataset: str,
    out: TextIO,
    status: str | None,
    on_record: Callable[[], None] | None,
) -> int:
    """``export --as csv`` from the stored metric rows, streamed: no record is parsed
    but the few where a metric first appears, whose own metric order places the columns
    exactly as a pass computing every record's metrics would."""
    metric_rows.ensure(db, dataset)
    names = sorted(metric_table.metric_names(db, dataset, status))
    first = metric_table.first_records(db, dataset, names, status)
    config = store_settings.get_all(db, dataset)
    order: dict[str, None] = {}
    firsts = store_records.get_many(db, sorted({rowid for _, rowid in first.values()}))
    for stored in sorted(firsts, key=lambda s: (s.position, s.rowid)):
        for layer in (stored.judge, effective(stored.judge, stored.human)):
            computed = record_values(stored.record, layer, config, stored.judge)
            order.update((name, None) for name in computed if name in first)
    order.update(dict.fromkeys(sorted(first)))  # kept, should a stored row name one more
    rows: Any = metric_table.rows(db, dataset, list(order), status)
    if on_record is not None:
        rows = _counted(rows, on_record)
    return csv_export.write(rows, out, list(order))


def _counted(items, on_record: Callable[[], None]) -> Iterator[Any]:
    for item in items:
        on_record()
        yield item


def protected_paths(db: sqlite_utils.Database, *also: str | Path) -> list[Path]:
    """Files an export must never replace: the DB with its WAL, shared-memory and
    journal files, every dataset's input file, and ``also`` (the command's input)."""
    found: list[Path] = [Path(p) for p in also]
    db_path = browse.database_path(db)
    if db_path:
        found += [Path(db_path + suffix) for suffix in ("", "-wal", "-shm", "-journal")]
    for row in store_records.datasets(db):
        if row["source_path"]:
            source = Path(row["source_path"])
            found.append(source)
            if not source.is_absolute() and db_path:  # stored as typed, maybe elsewhere
                found.append(Path(db_path).parent / source)
    return found


def check_destination(out: Path, protected: Iterable[Path], force: bool) -> None:
    """Refuse to write ``out`` over a protected file (compared by resolved path, which
    follows symlinks, and by inode, which catches hard links), or over any existing
    file without ``force``."""
    target = out.resolve()
    try:
        out_stat: os.stat_result | None = out.stat()
    except OSError:
        out_stat = None
    for path in protected:
        same = path.resolve() == target
        if not same and out_stat is not None:
            try:
                same = os.path.samestat(out_stat, path.stat())
            except OSError:
                same = False
        if same:
            raise RagreviewError(
                f"{out}: refusing to write over {path} (the review database or an input); "
                "choose another --out"
            )
    if out_stat is not None and not force:
        raise RagreviewError(f"{out} already exists: give --force to replace it")


def temp_beside(path: Path) -> tuple[Path, int]:
    """A new temporary file in ``path``'s folder (so it can be renamed over ``path``),
    under a unique name, created exclusively: never an existing file of the user's.
    Returns its path and an open descriptor for writing."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
    except OSError as err:
        raise RagreviewError(f"{path}: cannot write: {err.strerror}") from None
    return tmp, fd


def write_file(
    db: sqlite_utils.Database,
    dataset: str,
    fmt: str,
    path: Path,
    *,
    force: bool = False,
    protect: Iterable[str | Path] = (),
    **options: Any,
) -> int:
    """``write`` (with ``options``) to ``path``, after ``check_destination``.

    Atomic: the file is written under a unique temporary name in the same folder,
    synced, then renamed over ``path``, so a reader never sees half a file and a failed
    export (a full disk, Ctrl-C) leaves the previous file in place."""
    check_destination(path, protected_paths(db, *protect), force)
    tmp, fd = temp_beside(path)
    try:
        with open(fd, "w", encoding="utf-8", newline="") as fh:
            count = write(db, dataset, fmt, fh, **options)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise RagreviewError(f"{path}: cannot write: {err.strerror or err}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return count


def reviewed_path(db_path: str | Path, dataset: str, suffix: str) -> Path:
    """``<dataset>.reviewed.<ext>`` beside the DB."""
    return Path(db_path).with_name(f"{dataset}.reviewed{suffix}")
