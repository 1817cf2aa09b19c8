"""Storing an import: records, judge labels, imported human labels and metric rows.

One write transaction; the records stream through in batches so memory stays flat.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..core.labels import Layer
from ..core.record import ImportItem, Record
from . import metric_bulk, metric_rows
from .db import write
from .records import ImportSummary, content_hash, dumps, now

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

METRIC_BATCH = 1_000  # records stored (and their metrics refreshed) per batch

_BOOL_JSON = {True: "true", False: "false"}


def _label_rows(rowid: int, layer: Layer) -> list[tuple]:
    # most labels are booleans: skip the serializer for them (hot on import)
    return [
        (
            rowid,
            name,
            target,
            _BOOL_JSON[value] if value is True or value is False else dumps(value),
        )
        for name, targets in layer.items()
        for target, value in targets.items()
    ]


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
    items: Iterable[ImportItem],
    reviewer: str = "import",
    on_progress: Any = None,
    source_document: str | None = None,
) -> ImportSummary:
    """Upsert records by (dataset, id) in one transaction.

    New records get their judge labels, and any human labels from the file as events
    by ``reviewer``. Known records keep their human labels and history; their judge
    labels are replaced by the file's; a changed record that had been reviewed or
    overridden becomes ``stale``. ``source_document`` is what a whole-file format
    needs besides the records to write the file back (see ``formats``).
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
        # rowid -> (record, judge layer) of the records since the last flush, so metrics
        # need not read them back (and memory stays flat: only one batch is held)
        batch: dict[int, tuple[Record, Layer]] = {}
        fresh: list[metric_bulk.New] = []  # new records without a human layer: bulk path
        judge_rows: list[tuple] = []
        new_rows: list[tuple] = []
        imported_human: list[tuple[int, Layer]] = []
        # New records get their rowids here so that records and label rows can go in
        # by executemany batches (the write transaction holds the DB to ourselves).
        next_rowid = conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM records").fetchone()[0]

        def flush() -> None:
            # records first: judge_labels rows and events reference them
            conn.executemany(
                "INSERT INTO records (rowid, dataset, id, position, task, data, source, "
                "content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                new_rows,
            )
            conn.executemany(
                "INSERT INTO judge_labels (record, name, target, value) VALUES (?, ?, ?, ?)",
                judge_rows,
            )
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
            metric_bulk.insert_new(db, dataset, fresh)
            metric_rows.refresh(db, list(batch), known=batch)
            new_rows.clear()
            judge_rows.clear()
            imported_human.clear()
            batch.clear()
            fresh.clear()

        unreported = 0  # records stored since the last progress report (one per batch)
        for item in items:
            unreported += 1
            rec = item.record
            data_json = dumps(rec.data)
            digest = content_hash(data_json, item.source)
            known = existing.get(rec.id)
            if known is None:
                rowid = next_rowid
                next_rowid += 1
                new_rows.append(
                    (
                        rowid,
                        dataset,
                        rec.id,
                        item.position,
                        rec.task,
                        data_json,
                        item.source,
                        digest,
                    )
                )
                existing[rec.id] = (rowid, digest, "unreviewed")
                summary.inserted += 1
                if item.human:
                    imported_human.append((rowid, item.human))
                    batch[rowid] = (rec, item.judge)
                else:
                    fresh.append((rowid, rec, item.judge, item.source))
            else:
                rowid, old_digest, status = known
                conn.execute("DELETE FROM judge_labels WHERE record = ?", (rowid,))
                if old_digest == digest:
                    conn.execute(
                        "UPDATE records SET position = ? WHERE rowid = ?", (item.position, rowid)
                    )
                    summary.unchanged += 1
                else:
                    new_status = (
                        "stale" if (status != "unreviewed" or rowid in has_human) else status
                    )
                    conn.execute(
                        "UPDATE records SET position = ?, task = ?, data = ?, source = ?, "
                        "content_hash = ?, status = ? WHERE rowid = ?",
                        (
                            item.position,
                            rec.task,
                            data_json,
                            item.source,
                            digest,
                            new_status,
                            rowid,
                        ),
                    )
                    summary.updated += 1
                    summary.stale += new_status == "stale"
                batch[rowid] = (rec, item.judge)
            judge_rows.extend(_label_rows(rowid, item.judge))
            if len(batch) + len(fresh) >= METRIC_BATCH or len(judge_rows) > 20_000:
                flush()
                if on_progress is not None:
                    on_progress(unreported)
                unreported = 0
        flush()
        if on_progress is not None and unreported:
            on_progress(unreported)
    return summary
