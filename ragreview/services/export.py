"""The export use case: writing a dataset out with its reviewed labels.

``export`` (to a file) and ``export_stream`` (to standard output) are the only ways to
write a dataset out: ``ragreview export``, ``Dataset.export``, the TUI's ``ctrl+e`` and
``serve`` (which runs the TUI) all call them, so every front end writes byte-identical
files for the same choice and passes the same guards (``output_file``: never the DB,
its WAL or an input; ``force`` to replace; temp-and-rename; stale temps removed)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .. import formats
from ..core.errors import RagreviewError
from ..core.gc_pause import gc_paused
from ..core.labels import effective
from ..formats import catalogue, csv_export
from ..formats.base import Traits
from ..formats.common import changed, lost_labels
from ..formats.scores import record_values
from ..store import browse, item_edits, metric_reads, metric_writes, source_lines
from ..store import records as store_records
from ..store import settings as store_settings
from . import output_file
from .line_writes import lines_writer

if TYPE_CHECKING:  # sqlite_utils imports click; the TUI worker needs no CLI
    import sqlite_utils

DISAGREEMENTS = "disagreements"  # the overridden items, not the records (disagreements.py)
# corrections in other tools' shapes (loop_exports.py): items too, not records
LOOP_FORMATS = catalogue.LOOP_TARGETS
ITEM_FORMATS = (DISAGREEMENTS, *LOOP_FORMATS)
# ("source": the format the dataset came in; the names: formats.catalogue)
AS_CHOICES = ("source", *catalogue.EXPORT_TARGETS, *ITEM_FORMATS)


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
    if fmt not in (catalogue.CSV, *ITEM_FORMATS) and fmt not in formats.REGISTRY:
        raise RagreviewError(f"export as {fmt!r} is not supported")
    return fmt


def source_suffix(db: sqlite_utils.Database, dataset: str) -> str:
    """The extension of the file the dataset was imported from (``.jsonl`` if unknown)."""
    source = _dataset_row(db, dataset)["source_path"]
    return (Path(source).suffix if source else "") or ".jsonl"


def total(db: sqlite_utils.Database, dataset: str) -> int:
    return browse.total_count(db, dataset)


def _traits(fmt: str) -> Traits:
    """What the writer of ``fmt`` declares (nothing, for a target that is no format)."""
    adapter = formats.REGISTRY.get(fmt)
    return Traits() if adapter is None else adapter.TRAITS


def _writer_config(
    db: sqlite_utils.Database, dataset: str, fmt: str, reviewed_only: bool, config: dict[str, Any]
) -> dict[str, Any]:
    # the settings, and what the writers need beyond them (whole-file formats, subsets)
    writer_config = {
        **config,
        "source.document": store_records.source_document(db, dataset),
        "export.subset": reviewed_only,
    }
    traits = _traits(fmt)
    if traits.needs_authors:
        # the writer names who made each override (InspectorRAGet)
        from ..store import reviewer_layers

        writer_config["export.authors"] = reviewer_layers.authors(db, dataset)
    if traits.needs_reasons:
        # the writer puts the reviewers' reasons in the file (DeepEval's ``reason``)
        from ..store import reviewer_layers

        writer_config["export.reasons"] = reviewer_layers.label_reasons(db, dataset)
    if traits.needs_rules:
        # the guideline rule each override applies (ragreview's own labels.rules, the
        # reason of a MetricAnnotation sample's edited output)
        from ..store import guidelines

        writer_config["export.rules"] = guidelines.dataset_label_rules(db, dataset)
        writer_config["export.rule_texts"] = guidelines.rules(db, dataset)
    return writer_config


def lost(
    db: sqlite_utils.Database, dataset: str, fmt: str, *, reviewed_only: bool = False
) -> dict[str, list[str]]:
    """Label name -> ids of the records whose label a ``fmt`` export would not hold:
    each record with overrides is written the way the export writes it and read back
    the way an import reads it, and what does not come back is lost (docs/formats.md).
    Empty for ragreview's own format and CSV, which hold every label."""
    adapter = formats.REGISTRY.get(fmt)
    read_back = None if adapter is None else adapter.read_back
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
            f"nothing was written. Export with --as {catalogue.NATIVE} to keep every label, "
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


def _write(
    db: sqlite_utils.Database,
    dataset: str,
    fmt: str,
    out: TextIO,
    *,
    reviewed_only: bool = False,
    allow_loss: bool = False,
    on_record: Callable[[], None] | None = None,
) -> int:
    """Write ``dataset`` to the open ``out`` as ``fmt`` (from ``resolve_format``); the
    count. Unguarded, hence private: ``export`` and ``export_stream`` call it. Refuses before writing anything when the format would lose labels (``check_loss``),
    unless ``allow_loss``.

    ``on_record`` is called once per record read (for a progress bar)."""
    if fmt == DISAGREEMENTS:  # items, not records: nothing of a format to lose
        from . import disagreements

        return disagreements.write(db, dataset, out, reviewed_only=reviewed_only)
    if fmt in LOOP_FORMATS:
        from . import loop_exports

        return loop_exports.write(db, dataset, fmt, out, reviewed_only=reviewed_only)
    if not (fmt == catalogue.CSV or _traits(fmt).holds_everything):
        changed = item_edits.edited(db, dataset)
        if changed:  # the source file's own fact/statement lists cannot hold them
            shown = ", ".join(changed[:5]) + (" …" if len(changed) > 5 else "")
            raise RagreviewError(
                f"{len(changed)} records have edited facts or statements that the {fmt} "
                f"format cannot hold ({shown}); export them with --as {catalogue.NATIVE}"
            )
    if not allow_loss:
        check_loss(db, dataset, fmt, reviewed_only=reviewed_only)
    status = "reviewed" if reviewed_only else None
    if fmt == catalogue.CSV:
        return _write_csv(db, dataset, out, status, on_record)
    writer = formats.adapter(fmt).write
    config = store_settings.get_all(db, dataset)
    writer_config = _writer_config(db, dataset, fmt, reviewed_only, config)
    if _traits(fmt).source_lines:
        with gc_paused():  # (see below)
            return _write_source_lines(db, dataset, out, status, writer, writer_config, on_record)
    items: Any = store_records.iterate(db, dataset, status=status, lazy_judge=True, sources=True)
    if reviewed_only and _traits(fmt).holds_everything:  # a gold set: who reviewed it, how
        from ..store.review_queries import with_gold_metadata

        items = with_gold_metadata(items, config)
    if on_record is not None:
        items = _counted(items, on_record)
    # Each page's records hold their layers, lines and pages of data: containers that
    # outlive a young collection, so the collector kept rescanning a growing old
    # generation (6.5% of the export's own thread at 20,000 rows). No cycles: each page
    # is freed by reference counting once written.
    with gc_paused():
        return writer(items, out, writer_config)


def _write_source_lines(
    db: sqlite_utils.Database,
    dataset: str,
    out: TextIO,
    status: str | None,
    writer: Callable[[Iterable[Any], TextIO, dict[str, Any]], int],
    writer_config: dict[str, Any],
    on_record: Callable[[], None] | None,
) -> int:
    """A ``Traits.source_lines`` format: the records nobody overrode written as their
    stored lines, straight from their compressed sources (``store.source_lines``), the
    others by ``writer``. The bytes the writer gives for every record (it writes an
    unchanged record as its line): the line breaks, and a record with human labels
    patched or written as read, are its own (``formats.line_writer.write_lines``).

    Building a record per line, reading its layers and decompressing its line alone
    cost ``export --as source`` about twice the CPU of a script that copies the lines
    from a table to a file (issue 27, bench/export_bench.py)."""
    write = lines_writer(out)
    count = 0
    for lines, records in source_lines.runs(db, dataset, status=status):
        if lines:
            if on_record is not None:
                for _ in lines:
                    on_record()
            write(lines)
            count += len(lines)
        else:
            count += writer(
                records if on_record is None else _counted(records, on_record), out, writer_config
            )
            out.flush()  # (the writer's bytes before the next lines, written past out)
    return count


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
    metric_writes.ensure(db, dataset)
    names = sorted(metric_reads.metric_names(db, dataset, status))
    first = metric_reads.first_records(db, dataset, names, status)
    config = store_settings.get_all(db, dataset)
    order: dict[str, None] = {}
    firsts = store_records.get_many(db, sorted({rowid for _, rowid in first.values()}))
    for stored in sorted(firsts, key=lambda s: (s.position, s.rowid)):
        for layer in (stored.judge, effective(stored.judge, stored.human)):
            computed = record_values(stored.record, layer, config, stored.judge)
            order.update((name, None) for name in computed if name in first)
    order.update(dict.fromkeys(sorted(first)))  # kept, should a stored row name one more
    rows: Any = metric_reads.rows(db, dataset, list(order), status)
    if on_record is not None:
        rows = _counted(rows, on_record)
    return csv_export.write(rows, out, list(order))


def _counted(items, on_record: Callable[[], None]) -> Iterator[Any]:
    for item in items:
        on_record()
        yield item


@dataclass
class Exported:
    """What an export wrote: ``count`` records (items for ``disagreements``) as ``fmt``,
    and under ``allow_loss`` the labels left out (name -> record ids)."""

    count: int
    fmt: str
    dropped: dict[str, list[str]] = field(default_factory=dict)

    @property
    def what(self) -> str:
        return "items" if self.fmt in ITEM_FORMATS else "records"


def _checked_format(
    db: sqlite_utils.Database, dataset: str, as_: str, reviewed_only: bool, allow_loss: bool
) -> tuple[str, dict[str, list[str]]]:
    """The writer's format and the labels it leaves out; refuses (``LossError``) before
    anything is opened when labels would be lost without ``allow_loss``."""
    fmt = resolve_format(db, dataset, as_)
    if allow_loss:
        return fmt, lost(db, dataset, fmt, reviewed_only=reviewed_only)
    check_loss(db, dataset, fmt, reviewed_only=reviewed_only)
    return fmt, {}


def export(
    db: sqlite_utils.Database,
    dataset: str,
    out: str | Path,
    *,
    as_: str = "source",
    reviewed_only: bool = False,
    allow_loss: bool = False,
    force: bool = False,
    inputs: Iterable[str | Path] = (),
    on_record: Callable[[], None] | None = None,
    force_word: str = "--force",
) -> Exported:
    """Write ``dataset`` to the file ``out`` as ``as_`` (one of ``AS_CHOICES``).

    Refused, before anything is written, when ``out`` is the DB, its WAL/SHM/journal,
    an input of the DB or one of ``inputs`` (the caller's input file), when it exists
    and ``force`` is not given (``force_word`` names the option in the message), or
    when the format would lose labels without ``allow_loss``. Atomic: written under a
    unique temporary name beside ``out`` and renamed over it; the temporary file goes
    on every exit path, and those of earlier killed exports to ``out`` are removed."""
    out = Path(out)
    parquet = as_ == catalogue.PARQUET
    if parquet:
        from . import parquet_export

        parquet_export.check_available(out)  # one clear line before any work
    # a format that would lose labels is refused first (the message to act on names
    # them), then the output; nothing is opened before both pass
    fmt, dropped = (
        (catalogue.PARQUET, {})
        if parquet
        else _checked_format(db, dataset, as_, reviewed_only, allow_loss)
    )
    output_file.check_destination(out, output_file.protected_paths(db, *inputs), force, force_word)
    if parquet:
        with output_file.replacing(out) as tmp:
            count = parquet_export.write_rows(
                db,
                dataset,
                tmp,
                _write,
                resolve_format(db, dataset, "source"),
                reviewed_only=reviewed_only,
                allow_loss=allow_loss,
                on_record=on_record,
            )
        return Exported(count, catalogue.PARQUET)
    with output_file.replacing_text(out) as fh:
        count = _write(
            db,
            dataset,
            fmt,
            fh,
            reviewed_only=reviewed_only,
            allow_loss=True,  # checked above
            on_record=on_record,
        )
    return Exported(count, fmt, dropped)


def export_stream(
    db: sqlite_utils.Database,
    dataset: str,
    out: TextIO,
    *,
    as_: str = "source",
    reviewed_only: bool = False,
    allow_loss: bool = False,
    inputs: Iterable[str | Path] = (),
    on_record: Callable[[], None] | None = None,
) -> Exported:
    """``export`` to an open text stream (``--out -``: standard output). Refused when the
    stream is open on the DB, its WAL or an input (by file identity)."""
    if as_ == catalogue.PARQUET:
        raise RagreviewError(f"--as {catalogue.PARQUET} needs a file for --out")
    output_file.check_stream(out, output_file.protected_paths(db, *inputs))
    fmt, dropped = _checked_format(db, dataset, as_, reviewed_only, allow_loss)
    count = _write(
        db, dataset, fmt, out, reviewed_only=reviewed_only, allow_loss=True, on_record=on_record
    )
    return Exported(count, fmt, dropped)


def reviewed_path(db_path: str | Path, dataset: str, suffix: str) -> Path:
    """``<dataset>.reviewed.<ext>`` beside the DB."""
    return Path(db_path).with_name(f"{dataset}.reviewed{suffix}")
