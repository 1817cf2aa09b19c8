"""Storing an import: records, judge labels, imported human labels and metric rows.

One write transaction; the records stream through in batches so memory stays flat.
Each record is first *prepared* (``prepare``: its JSON text, label rows and metrics,
all that needs no DB) and then stored. Preparing is most of the work and can
run in another process (``services.import_pipeline``); a new record without human
labels is then stored from its prepared rows alone.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core.labels import Layer
from ..core.record import ImportItem, Record, parse_record
from . import bulk, metric_bulk, metric_rows, reviewer_layers
from .db import write
from .records import ImportSummary, content_hash, dumps, label_value, loads, now

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

METRIC_BATCH = 1_000  # records stored (and their metrics refreshed) per batch

RECORD_COLUMNS = ("rowid", "dataset", "id", "position", "task", "data", "source", "content_hash")

_BOOL_JSON = {True: "true", False: "false"}


LabelRow = tuple[str, str, str]  # (name, target, value as JSON)


def _label_rows(layer: Layer) -> list[LabelRow]:
    # most labels are booleans: skip the serializer for them (hot on import)
    return [
        (name, target, _BOOL_JSON[value] if value is True or value is False else dumps(value))
        for name, targets in layer.items()
        for target, value in targets.items()
    ]


def _layer(rows: list[LabelRow]) -> Layer:
    layer: dict[str, dict[str, Any]] = {}
    for name, target, value in rows:
        layer.setdefault(name, {})[target] = label_value(value)
    return layer


class Prepared(NamedTuple):
    """One record ready to store: everything ``import_records`` needs, as plain values
    (cheap to pickle from a worker process)."""

    position: int
    id: str
    task: str | None
    data: str  # canonical record JSON (without id and labels)
    source: str | None
    judge: list[LabelRow]
    human: list[LabelRow]  # labels the file itself marks as human (rare)
    metrics: metric_bulk.Values  # its metric values as a new record (effective = judge)
    reviewers: tuple = ()  # ImportItem.reviewers: named reviewers' labels from the file


def prepare(item: ImportItem, settings: dict[str, Any]) -> Prepared:
    """The DB-free part of storing ``item``, under the dataset's ``settings``."""
    rec = item.record
    data = dumps(rec.data)
    return Prepared(
        item.position,
        rec.id,
        rec.task,
        data,
        item.source,
        _label_rows(item.judge),
        _label_rows(item.human),
        metric_bulk.new_record_values(rec, item.judge, item.source, settings),
        item.reviewers,
    )


def _item(prepared: Prepared) -> ImportItem:
    """The ``ImportItem`` back from its prepared form (a record a worker prepared that
    turns out to need the DB: a known id, or human labels)."""
    record = parse_record({"id": prepared.id, **loads(prepared.data)})
    return ImportItem(
        prepared.position,
        record,
        _layer(prepared.judge),
        _layer(prepared.human),
        prepared.source,
        prepared.reviewers,
    )


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while the records stream in.

    Every parsed row and record is a tree of new containers that outlives a young
    collection (a batch is held until it is flushed), so the collector keeps rescanning
    a growing old generation: about a fifth of the import's time. Import creates no
    reference cycles (reference counting frees each batch), so nothing piles up; the
    collector's previous state is restored however the import ends.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def import_records(
    db: sqlite_utils.Database,
    dataset: str,
    fmt: str,
    source_path: str | None,
    items: Iterable[ImportItem | Prepared],
    reviewer: str = "import",
    on_progress: Any = None,
    source_document: str | None = None,
    prepared_with: dict[str, Any] | None = None,
) -> ImportSummary:
    """Upsert records by (dataset, id) in one transaction.

    New records get their judge labels, and any human labels from the file as events
    by ``reviewer``. Known records keep their human labels and history; their judge
    labels are replaced by the file's; a changed record that had been reviewed or
    overridden becomes ``stale``. ``source_document`` is what a whole-file format
    needs besides the records to write the file back (see ``formats``).

    ``items`` may come prepared (``prepare``) with the settings ``prepared_with``;
    if the dataset's settings differ by the time the transaction starts, their metrics
    are recomputed.
    """
    from . import history  # events for human labels carried by the file

    summary = ImportSummary()
    conn = db.conn
    with write(conn), _gc_paused():
        conn.execute(
            "INSERT INTO datasets (name, format, source_path, imported_at, source_document) "
            "VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET format = excluded.format, "
            "source_path = excluded.source_path, imported_at = excluded.imported_at, "
            "source_document = excluded.source_document",
            (dataset, fmt, source_path, now(), source_document),
        )
        existing = {
            rid: (rowid, h, status)
            for rowid, rid, h, status in conn.execute(
                "SELECT rowid, id, content_hash, status FROM records WHERE dataset = ?", (dataset,)
            )
        }
        has_human = {
            r
            for (r,) in conn.execute(
                "SELECT DISTINCT h.record FROM human_labels h JOIN records r ON r.rowid = h.record "
                "WHERE r.dataset = ?",
                (dataset,),
            )
        }
        settings = metric_rows._settings(db, dataset, {})
        trusted = prepared_with is None or prepared_with == settings
        # rowid -> (record, judge layer) of the records since the last flush, so metrics
        # need not read them back (and memory stays flat: only one batch is held)
        batch: dict[int, tuple[Record, Layer]] = {}
        fresh: list[tuple[int, metric_bulk.Values]] = []  # new, no human layer: bulk path
        pending: set[int] = set()  # rowids since the last flush
        judge_rows: list[tuple] = []
        new_rows: list[tuple] = []
        changed_rows: list[tuple] = []  # UPDATEs of known records whose content changed
        moved_rows: list[tuple] = []  # (position, rowid) of unchanged known records
        imported_human: list[tuple[int, Layer]] = []
        reviewer_rows: dict[int, tuple] = {}  # rowid -> its named reviewers' labels
        # New records get their rowids here so that records and label rows can go in
        # by multi-row batches (the write transaction holds the DB to ourselves).
        next_rowid = conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM records").fetchone()[0]

        def flush() -> None:
            # records first: judge_labels rows and events reference them
            bulk.insert(conn, "records", RECORD_COLUMNS, new_rows)
            replaced = [(r,) for *_, r in changed_rows] + [(r,) for _, r in moved_rows]
            conn.executemany("DELETE FROM judge_labels WHERE record = ?", replaced)
            conn.executemany("UPDATE records SET position = ? WHERE rowid = ?", moved_rows)
            conn.executemany(
                "UPDATE records SET position = ?, task = ?, data = ?, source = ?, "
                "content_hash = ?, status = ? WHERE rowid = ?",
                changed_rows,
            )
            bulk.insert(conn, "judge_labels", ("record", "name", "target", "value"), judge_rows)
            for rowid, layer in imported_human:
                for name, targets in layer.items():
                    for target, value in targets.items():
                        history.apply_change(
                            conn,
                            rowid,
                            name,
                            target,
                            value,
                            reviewer,
                            kind="set",
                            reason="imported from file",
                        )
            if reviewer_rows:
                reviewer_layers.replace(conn, source_path or dataset, reviewer_rows)
            metric_bulk.store(conn, metric_bulk.rows_for_new(dataset, fresh))
            metric_rows.refresh(db, list(batch), known=batch)
            reviewer_rows.clear()
            for rows in (new_rows, judge_rows, changed_rows, moved_rows, fresh, imported_human):
                rows.clear()
            batch.clear()
            pending.clear()

        unreported = 0  # records stored since the last progress report (one per batch)
        # id -> position of every record of this import. The readers give every record
        # an id of its own; should one repeat anyway, the first stays (never a silent
        # overwrite) and the caller reports the other from ``summary.repeated``.
        stored: dict[str, int] = {}
        for entry in items:
            unreported += 1
            if isinstance(entry, Prepared):
                prep, item = entry, None
            else:
                prep, item = prepare(entry, settings), entry
            if prep.id in stored:
                summary.repeated.append((prep.id, stored[prep.id], prep.position))
                continue
            stored[prep.id] = prep.position
            # hashed here, not in prepare: the worker process is the busier one
            digest = content_hash(prep.data, prep.source)
            known = existing.get(prep.id)
            if known is None:
                rowid = next_rowid
                next_rowid += 1
                new_rows.append(
                    (
                        rowid,
                        dataset,
                        prep.id,
                        prep.position,
                        prep.task,
                        prep.data,
                        prep.source,
                        digest,
                    )
                )
                existing[prep.id] = (rowid, digest, "unreviewed")
                summary.inserted += 1
                if prep.human or not trusted:
                    item = item or _item(prep)
                    if item.human:
                        imported_human.append((rowid, item.human))
                    batch[rowid] = (item.record, item.judge)
                else:
                    fresh.append((rowid, prep.metrics))
            else:
                rowid, old_digest, status = known
                if old_digest == digest:
                    moved_rows.append((prep.position, rowid))
                    summary.unchanged += 1
                else:
                    new_status = (
                        "stale" if (status != "unreviewed" or rowid in has_human) else status
                    )
                    changed_rows.append(
                        (
                            prep.position,
                            prep.task,
                            prep.data,
                            prep.source,
                            digest,
                            new_status,
                            rowid,
                        )
                    )
                    existing[prep.id] = (rowid, digest, new_status)
                    summary.updated += 1
                    summary.stale += new_status == "stale"
                item = item or _item(prep)
                batch[rowid] = (item.record, item.judge)
            pending.add(rowid)
            if prep.reviewers and (known is None or old_digest != digest):
                reviewer_rows[rowid] = prep.reviewers
            judge_rows.extend([(rowid, *row) for row in prep.judge])
            if len(pending) >= METRIC_BATCH or len(judge_rows) > 20_000:
                flush()
                if on_progress is not None:
                    on_progress(unreported)
                unreported = 0
        flush()
        if on_progress is not None and unreported:
            on_progress(unreported)
    return summary
