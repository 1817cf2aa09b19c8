"""Storing an import: records, judge labels, imported human labels and metric rows.

One write transaction; the records stream through in batches so memory stays flat.
Each record is first *prepared* (``prepare``: its JSON text, label rows and metrics,
all that needs no DB) and then stored. Preparing is most of the work and can
run in another process (``services.import_pipeline``); a new record without human
labels is then stored from its prepared rows alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core import metrics
from ..core.errors import InputError
from ..core.gc_pause import gc_paused
from ..core.labels import Layer
from ..core.record import ImportItem, Record, Unchanged, line_hash, parse_record
from . import (
    bulk,
    history,
    metric_import_writes,
    metric_writes,
    reviewer_layers,
    run_layers,
    source_blob,
)
from . import settings as store_settings
from .db import write
from .records import ImportSummary, content_hash, dumps, label_value, loads, now

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
    metrics: metric_import_writes.Values  # its metric values as a new record (effective = judge)
    reviewers: tuple = ()  # ImportItem.reviewers: named reviewers' labels from the file
    own_source: bool = False  # ImportItem.own_source: its line's hash is stored
    stored_source: bytes | None = None  # the source compressed, to store (store.source_blob)
    # (content hash, line hash) where ``prepare`` computed them (``hashed``); ``source``
    # is then None when ``stored_source`` gives it back
    hashes: tuple[str, bytes | None] | None = None
    reviewed: bool = False  # ImportItem.reviewed
    rules: tuple = ()  # ImportItem.rules as (label, target, rule) triples


def prepare(item: ImportItem, settings: dict[str, Any], *, hashed: bool = False) -> Prepared:
    """The DB-free part of storing ``item``, under the dataset's ``settings``; with
    ``hashed``, or where its source is packed, its hashes too (else the storing process
    computes them)."""
    (prepared,) = prepare_batch([item], settings, hashed=hashed)
    assert isinstance(prepared, Prepared)
    return prepared


def prepare_batch(
    entries: Iterable[ImportItem | Unchanged | InputError],
    settings: dict[str, Any],
    *,
    hashed: bool = False,
) -> list[Prepared | Unchanged | InputError]:
    """``prepare`` of each record among ``entries`` (lines skipped and errors pass
    through as they are), in their order (see ``Preparing``)."""
    preparing = Preparing(settings, hashed=hashed)
    for entry in entries:
        preparing.add(entry)
    return preparing.take()


class Preparing:
    """Records prepared as they come (``add``), given back in their order by ``take``.

    Each record is prepared as it comes, while what was read of it is still in the
    cache; but the sources are compressed (and hashed) at ``take``, one after another:
    between two records' compressions the rest of a record's preparing pushed zstd's
    tables (~100 KB) out of the cache, and a line compressed that way cost about half as
    much again as one of a run (issue 27: compressing was a fifth of an import worker's
    time). The blobs are the same bytes either way."""

    def __init__(self, settings: dict[str, Any], *, hashed: bool = False) -> None:
        self.settings, self.hashed = settings, hashed
        self._out: list[Any] = []  # entries, and the fields of the records' Prepared
        # (fields, the source to pack, whether it is its own line): not the item, whose
        # parsed row would be held for the whole batch
        self._packing: list[tuple[list[Any], bytes | str, bool]] = []

    def __len__(self) -> int:
        return len(self._out)

    def add(self, entry: ImportItem | Unchanged | InputError) -> None:
        if isinstance(entry, (InputError, Unchanged)):
            self._out.append(entry)
            return
        fields, line = _fields(entry, self.settings)
        if line is not None:
            self._packing.append((fields, line, entry.own_source))
        elif self.hashed:
            fields[_HASHES] = _hashes(fields[_DATA], entry.source, entry.raw, entry.own_source)
        self._out.append(fields)

    def take(self) -> list[Prepared | Unchanged | InputError]:
        """The entries added since the last ``take``, the records prepared."""
        if self._packing:
            pack = source_blob.packer()
            for fields, line, own_source in self._packing:
                raw = line if isinstance(line, bytes) else line.encode()
                fields[_STORED] = pack(raw)
                # (hashed where the text is at hand: a packed source is not sent across
                # whole for the storing process to hash, which cost more than the hash;
                # _item unpacks it should the record need it)
                fields[_HASHES] = _hashes(fields[_DATA], None, raw, own_source)
                fields[_SOURCE] = None
        out = [e if type(e) is not list else Prepared(*e) for e in self._out]
        self._out, self._packing = [], []
        return out


# where ``_fields`` puts the Prepared's fields that ``Preparing`` fills in
_DATA, _SOURCE = Prepared._fields.index("data"), Prepared._fields.index("source")
_STORED, _HASHES = Prepared._fields.index("stored_source"), Prepared._fields.index("hashes")


def _fields(item: ImportItem, settings: dict[str, Any]) -> tuple[list[Any], bytes | str | None]:
    """A ``Prepared``'s fields but its packed source and hashes, and the source to pack
    (None where it stays as it is)."""
    rec = item.record
    data = dumps(rec.data)
    # a family whose metrics read the source row (MT-RAG's: core.metrics.source_format)
    reads_source = metrics.source_format(rec) is not None
    seen = rec
    if reads_source and isinstance(item.row, dict) and "source" not in rec.data:
        # its metrics see the row the reader parsed, not a second parse of its text (one
        # more JSON parse per record, issue 27)
        seen = metrics.with_source(rec, item.row)
    values = metric_import_writes.new_record_values(seen, item.judge, item.source, settings)
    line = None
    # (metrics that read the stored source text itself, in SQL, need it kept as text)
    if item.source is not None and not reads_source:
        line = item.raw if item.raw is not None else item.source
    fields = [
        item.position,
        rec.id,
        rec.task,
        data,
        item.source,
        _label_rows(item.judge),
        _label_rows(item.human) if item.human else [],
        values,
        item.reviewers,
        item.own_source,
        None,
        None,
        item.reviewed,
        tuple((name, target, rule) for (name, target), rule in item.rules.items())
        if item.rules
        else (),
    ]
    return fields, line


def _hashes(
    data: str, source: str | None, raw: bytes | None, own_source: bool
) -> tuple[str, bytes | None]:
    """(content hash, line hash) of a record: its data's JSON and source text (the bytes
    read where the reader had them, else the text encoded once); the line hash only for
    a record whose source is its own line (``ImportItem.own_source``)."""
    text = raw if raw is not None or source is None else source.encode()
    digest = content_hash(data, text)
    return digest, line_hash(text) if own_source and text is not None else None


def _item(prepared: Prepared) -> ImportItem:
    """The ``ImportItem`` back from its prepared form (a record a worker prepared that
    turns out to need the DB: a known id, or human labels)."""
    record = parse_record({"id": prepared.id, **loads(prepared.data)})
    source = prepared.source
    if source is None and prepared.stored_source is not None:
        source = source_blob.unpack(prepared.stored_source)
    return ImportItem(
        prepared.position,
        record,
        _layer(prepared.judge),
        _layer(prepared.human),
        source,
        prepared.reviewers,
        prepared.own_source,
        reviewed=prepared.reviewed,
        rules={(name, target): rule for name, target, rule in prepared.rules},
    )


def import_records(
    db: sqlite_utils.Database,
    dataset: str,
    fmt: str,
    source_path: str | None,
    items: Iterable[ImportItem | Prepared | Unchanged],
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
                if isinstance(entry, Prepared):
                    prep, item = entry, None
                else:
                    prep, item = prepare(entry, settings), entry
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
    prep: Prepared,
    item: ImportItem | None,
    trusted: bool,
) -> None:
    """Queue one record: new, unchanged (only its position may move) or changed."""
    # hashed here unless prepare did: one worker is the busier process, two are not
    if prep.hashes is not None:
        digest, source_hash = prep.hashes
    else:
        raw = item.raw if item is not None else None
        digest, source_hash = _hashes(prep.data, prep.source, raw, prep.own_source)
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
            item = item or _item(prep)
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
        item = item or _item(prep)
        batch.known[rowid] = (item.record, item.judge)
    batch.pending.add(rowid)
    if prep.reviewers and (found is None or found[1] != digest):
        batch.reviewer_rows[rowid] = prep.reviewers
    if prep.judge:
        values = batch.judge_values
        for name, target, value in prep.judge:
            values += (rowid, name, target, value)
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
