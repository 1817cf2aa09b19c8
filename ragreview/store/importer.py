"""Storing an import: records, judge labels, imported human labels and metric rows.

One write transaction; the records stream through in batches so memory stays flat.
Each record is first *prepared* (``store.preparing``: its JSON text, label rows and
metrics, all that needs no DB) and then stored. Preparing is most of the work and can
run in another process (``services.import_pipeline``); a new record without human
labels is then stored from its prepared rows alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..core.gc_pause import gc_paused
from ..core.import_items import ImportItem, Unchanged
from ..core.labels import Layer
from ..core.record import Record
from . import (
    bulk,
    history,
    metric_import_writes,
    metric_writes,
    preparing,
    reviewer_layers,
    run_layers,
)
from . import settings as store_settings
from .db import write
from .import_summary import ImportSummary
from .records import now

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

METRIC_BATCH = 1_000  # records stored (and their metrics refreshed) per batch

RECORD_COLUMNS = (
    "rowid",
    "dataset",
    "id",
    "position",
    "task",
    "data",
    "source",
    "content_hash",
    "source_hash",
    "source_refs",
)

JUDGE_COLUMNS = ("record", "name", "target", "value")


def import_records(
    db: sqlite_utils.Database,
    dataset: str,
    fmt: str,
    source_path: str | None,
    items: Iterable[ImportItem | preparing.Prepared | Unchanged],
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
    summary = ImportSummary()
    conn = db.conn
    with write(conn), gc_paused():
        _upsert_dataset(conn, dataset, fmt, source_path, source_document)
        settings = store_settings.get_all(db, dataset)
        batch = _Batch(db, dataset, reviewer, source_path)
        known = _Known(conn, dataset)
        trusted = prepared_with is None or prepared_with == settings
        unreported = 0  # records stored since the last progress report (one per batch)
        # The readers give every record an id of its own; should one repeat anyway, the
        # first stays (never a silent overwrite) and the caller reports the other from
        # ``summary.repeated``.
        stored = _Seen(conn)
        # (unchanged lines cost next to nothing: progress is told every 10 batches' worth)
        for entry in items:
            unreported += 1
            if isinstance(entry, Unchanged):  # a line stored before, byte for byte
                first = stored.first(entry.id, entry.position)
                if first is not None:
                    summary.repeated.append((entry.id, first, entry.position))
                    continue
                summary.unchanged += 1
                if entry.moved:
                    batch.positions.append((entry.position, entry.rowid))
            else:
                if isinstance(entry, preparing.Prepared):
                    prep, item = entry, None
                else:
                    prep, item = preparing.prepare(entry, settings), entry
                first = stored.first(prep.id, prep.position)
                if first is not None:
                    summary.repeated.append((prep.id, first, prep.position))
                    continue
                _store_one(batch, known, summary, prep, item, trusted)
            if batch.full() or unreported >= 10 * METRIC_BATCH:
                batch.flush()
                if on_progress is not None:
                    on_progress(unreported)
                unreported = 0
        batch.flush()
        stored.drop()
        run_layers.after_import(db, dataset)
        if on_progress is not None and unreported:
            on_progress(unreported)
    return summary


class _Seen:
    """The ids this import has come to, each with the position it first came at, in a
    TEMP table (on disk, under the temp database's own small page cache): as a dict
    they grew the import by ~10 MB per 100,000 records (issue 27's peak memory)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS import_seen "
            "(id TEXT PRIMARY KEY, position INTEGER) WITHOUT ROWID"
        )
        conn.execute("DELETE FROM temp.import_seen")
        # (one cursor for every record's INSERT: Connection.execute makes a new one per
        # call, a third of the statement's cost here)
        self._cursor = conn.cursor()

    def first(self, rid: str, position: int) -> int | None:
        """None the first time ``rid`` comes (noted at ``position``), else the position
        it first came at."""
        added = self._cursor.execute(
            "INSERT OR IGNORE INTO temp.import_seen VALUES (?, ?)", (rid, position)
        ).rowcount
        if added:
            return None
        row = self._conn.execute(
            "SELECT position FROM temp.import_seen WHERE id = ?", (rid,)
        ).fetchone()
        return int(row[0])

    def drop(self) -> None:
        self._cursor.close()
        self._conn.execute("DROP TABLE temp.import_seen")


def _upsert_dataset(
    conn: Any, dataset: str, fmt: str, source_path: str | None, source_document: str | None
) -> None:
    conn.execute(
        "INSERT INTO datasets (name, format, source_path, imported_at, source_document) "
        "VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET format = excluded.format, "
        "source_path = excluded.source_path, imported_at = excluded.imported_at, "
        "source_document = excluded.source_document",
        (dataset, fmt, source_path, now(), source_document),
    )


class _Known:
    """What the dataset already holds: each id's rowid, content hash and status, and
    which records carry human labels (a changed one of those becomes stale). Read when
    the first parsed record asks: a re-import of an unchanged file never does."""

    def __init__(self, conn: Any, dataset: str) -> None:
        self._conn, self._dataset = conn, dataset
        # New records get their rowids here so that records and label rows can go in
        # by multi-row batches (the write transaction holds the DB to ourselves).
        self.next_rowid = conn.execute(
            "SELECT coalesce(max(rowid), 0) + 1 FROM records"
        ).fetchone()[0]

    @cached_property
    def records(self) -> dict[str, tuple[int, str, str]]:
        return {
            rid: (rowid, h, status)
            for rowid, rid, h, status in self._conn.execute(
                "SELECT rowid, id, content_hash, status FROM records WHERE dataset = ?",
                (self._dataset,),
            )
        }

    @cached_property
    def with_human(self) -> set[int]:
        return {
            r
            for (r,) in self._conn.execute(
                "SELECT DISTINCT h.record FROM human_labels h JOIN records r ON r.rowid = h.record "
                "WHERE r.dataset = ?",
                (self._dataset,),
            )
        }


def _store_one(
    batch: _Batch,
    known: _Known,
    summary: ImportSummary,
    prep: preparing.Prepared,
    item: ImportItem | None,
    trusted: bool,
) -> None:
    """Queue one record: new, unchanged (only its position may move) or changed."""
    # hashed here unless prepare did: one worker is the busier process, two are not
    if prep.hashes is not None:
        digest, source_hash = prep.hashes
    else:
        raw = item.raw if item is not None else None
        digest, source_hash = preparing.hashes(prep.data, prep.source, raw, prep.own_source)
    # (refs: only an older import's compacted line had them; a changed record's go)
    source, refs = (prep.source if prep.stored_source is None else prep.stored_source), None
    found = known.records.get(prep.id)
    if found is None:
        rowid = known.next_rowid
        known.next_rowid += 1
        batch.new_rows.append(
            (
                rowid,
                batch.dataset,
                prep.id,
                prep.position,
                prep.task,
                prep.data,
                source,
                digest,
                source_hash,
                refs,
            )
        )
        # (not added to known.records: ``stored`` already keeps a later line with this
        # id from coming here, and a map of every new id grew the import by ~25 MB
        # per 100,000 records: issue 27's peak memory)
        summary.inserted += 1
        if prep.human or prep.reviewed or not trusted:
            item = item or preparing.item(prep)
            if item.human:
                batch.imported_human.append((rowid, item.human))
                if item.rules:
                    batch.imported_rules[rowid] = item.rules
            if item.reviewed:
                batch.imported_reviewed.append(rowid)
            batch.known[rowid] = (item.record, item.judge)
        else:  # metrics as prepared: the bulk path
            batch.fresh.append((rowid, prep.metrics))
    else:
        rowid, old_digest, status = found
        if old_digest == digest:
            batch.moved_rows.append((prep.position, source_hash, rowid))
            summary.unchanged += 1
        else:
            stale = status != "unreviewed" or rowid in known.with_human
            new_status = "stale" if stale else status
            batch.changed_rows.append(
                (
                    prep.position,
                    prep.task,
                    prep.data,
                    source,
                    refs,
                    digest,
                    source_hash,
                    new_status,
                    rowid,
                )
            )
            summary.updated += 1
            summary.stale += new_status == "stale"
        item = item or preparing.item(prep)
        batch.known[rowid] = (item.record, item.judge)
    batch.pending.add(rowid)
    if prep.reviewers and (found is None or found[1] != digest):
        batch.reviewer_rows[rowid] = prep.reviewers
    judge = prep.judge  # (name, target, value, name, …)
    if judge:
        # its rows with the rowid (record, name, target, value, record, …), laid out by
        # slices: no tuple per label (about 12 a RAGBench record)
        rows = [rowid] * (len(judge) // 3 * 4)
        rows[1::4], rows[2::4], rows[3::4] = judge[0::3], judge[1::3], judge[2::3]
        batch.judge_values += rows
        batch.labelled.append(rowid)


class _Batch:
    """The rows of the records queued since the last flush, written together: records
    first (judge labels and events reference them), then labels, events and metric
    rows. Only one batch is held, so memory stays flat."""

    def __init__(
        self, db: sqlite_utils.Database, dataset: str, reviewer: str, source_path: str | None
    ) -> None:
        self.db, self.dataset, self.reviewer, self.source_path = db, dataset, reviewer, source_path
        self._clear()

    def _clear(self) -> None:
        # rowid -> (record, judge layer), so metrics need not read them back
        self.known: dict[int, tuple[Record, Layer]] = {}
        self.fresh: list[tuple[int, metric_import_writes.Values]] = []  # new, no human layer
        self.pending: set[int] = set()  # rowids since the last flush
        # judge label rows end to end (record, name, target, value, record, …): no
        # tuple per row (bulk.insert_flat)
        self.judge_values: list[Any] = []
        self.labelled: list[int] = []  # the records of judge_values, each once
        self.new_rows: list[tuple] = []
        self.changed_rows: list[tuple] = []  # UPDATEs of known records whose content changed
        self.moved_rows: list[tuple] = []  # (position, source_hash, rowid): unchanged, parsed
        self.positions: list[tuple] = []  # (position, rowid): unchanged lines, not parsed
        self.imported_human: list[tuple[int, Layer]] = []
        self.imported_rules: dict[int, Mapping[tuple[str, str], str]] = {}  # ImportItem.rules
        self.imported_reviewed: list[int] = []  # new records the file marks as reviewed
        self.reviewer_rows: dict[int, tuple] = {}  # rowid -> its named reviewers' labels

    def full(self) -> bool:
        return len(self.pending) >= METRIC_BATCH or len(self.judge_values) > 80_000

    def flush(self) -> None:
        conn = self.db.conn
        bulk.insert(conn, "records", RECORD_COLUMNS, self.new_rows)
        replaced = [(r,) for *_, r in self.changed_rows] + [(r,) for *_, r in self.moved_rows]
        conn.executemany("DELETE FROM judge_labels WHERE record = ?", replaced)
        conn.executemany(
            "UPDATE records SET position = ?, source_hash = ? WHERE rowid = ?", self.moved_rows
        )
        conn.executemany("UPDATE records SET position = ? WHERE rowid = ?", self.positions)
        conn.executemany(
            "UPDATE records SET position = ?, task = ?, data = ?, source = ?, source_refs = ?, "
            "content_hash = ?, source_hash = ?, status = ? WHERE rowid = ?",
            self.changed_rows,
        )
        bulk.insert_flat(conn, "judge_labels", JUDGE_COLUMNS, self.judge_values)
        run_layers.store_import(
            conn, self.dataset, self.source_path, [r for (r,) in replaced], sorted(self.labelled)
        )
        self._human_labels_from_the_file()
        if self.reviewer_rows:
            reviewer_layers.replace(conn, self.source_path or self.dataset, self.reviewer_rows)
        metric_import_writes.store(
            conn, metric_import_writes.rows_for_new(self.dataset, self.fresh)
        )
        metric_writes.refresh(self.db, list(self.known), known=self.known)
        self._clear()

    def _human_labels_from_the_file(self) -> None:
        for rowid, layer in self.imported_human:
            rules = self.imported_rules.get(rowid, {})
            for name, targets in layer.items():
                for target, value in targets.items():
                    history.apply_change(
                        self.db.conn,
                        rowid,
                        name,
                        target,
                        value,
                        self.reviewer,
                        kind="set",
                        reason="imported from file",
                        rule=rules.get((name, target)),
                    )
        for rowid in self.imported_reviewed:
            history.set_status(self.db.conn, rowid, "reviewed", self.reviewer)
