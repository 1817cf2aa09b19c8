"""Records and the judge layer: import (upsert by dataset and id), lookup, iteration."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

import orjson

from ..core.errors import RagreviewError
from ..core.labels import Layer
from ..core.one_ahead import one_ahead
from ..core.record import Record, parse_record
from . import compact, source_blob

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def dumps(value: Any) -> str:
    """JSON text for a stored value (labels, data). NaN is not valid JSON: null."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # an integer beyond 64 bits (parsed by the json fallback)
        return json.dumps(value, ensure_ascii=False)


def loads(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # source text may hold NaN, which only json accepts
        return json.loads(text)


@dataclass(frozen=True)
class StoredRecord:
    """A record as stored: its row, its layers and its review state."""

    rowid: int
    dataset: str
    position: int
    # the canonical record's JSON as stored (``data``), or the page to read it from
    stored_data: str | _DataPage = field(repr=False)
    judge_layer: Layer | _JudgePage = field(repr=False)  # see ``judge``
    human: Layer
    status: str
    reviewed_by: str | None
    reviewed_at: str | None
    note: str | None
    # compressed (store.source_blob), whole, or as an older import's ``compact`` kept it
    stored_source: str | bytes | None = field(repr=False)
    source_refs: str | None = field(default=None, repr=False)  # see store.compact

    @property
    def data(self) -> str:
        """The canonical record's JSON, as stored."""
        stored = self.stored_data
        return stored.texts[self.rowid] if isinstance(stored, _DataPage) else stored

    @cached_property
    def source(self) -> str | None:
        """The original source record's JSON text."""
        stored = self.stored_source
        if isinstance(stored, bytes):
            return self.source_bytes.decode()  # type: ignore[union-attr]
        if self.source_refs is None or stored is None:
            return stored
        return compact.rebuild(stored, self.source_refs, self.data)

    @cached_property
    def source_bytes(self) -> bytes | None:
        """The source line's UTF-8 bytes, exactly as read (an export writes them)."""
        stored = self.stored_source
        if isinstance(stored, bytes):
            return source_blob.unpack_bytes(stored)
        text = self.source
        return None if text is None else text.encode()

    @cached_property
    def record(self) -> Record:
        """Parsed on first use: an export writes most records back from ``source`` alone,
        and parsing is most of the cost of reading a record."""
        return parse_record(loads(self.data))

    @property
    def judge(self) -> Layer:
        page = self.judge_layer
        return page.layers[self.rowid] if isinstance(page, _JudgePage) else page

    @property
    def id(self) -> str:
        return self.record.id


class _DataPage:
    """The canonical data of a page of records, read when the first one is asked for
    (``iterate(sources=True)``): an export writes most records from their source alone,
    and reading every record's data (about three times its compressed source) was a
    third of ``export --as source``'s work beyond the floor's (issue 27)."""

    def __init__(self, conn: Any, rowids: list[int]) -> None:
        self._conn = conn
        self._rowids = rowids

    @cached_property
    def texts(self) -> Mapping[int, str]:
        return _data_texts(self._conn, self._rowids)  # (a page: at most ``iterate``'s batch)


def _data_texts(conn: Any, rowids: list[int]) -> dict[int, str]:
    """rowid -> the canonical data (JSON text) of each of ``rowids`` (a page's worth)."""
    marks = ",".join("?" * len(rowids))
    return dict(conn.execute(f"SELECT rowid, data FROM records WHERE rowid IN ({marks})", rowids))


class _JudgePage:
    """The judge layers of a page of records, read when the first one is asked for
    (``iterate(lazy_judge=True)``), on the connection and thread that read the page."""

    def __init__(self, conn: Any, rowids: list[int]) -> None:
        self._conn = conn
        self._rowids = rowids

    @cached_property
    def layers(self) -> Mapping[int, Layer]:
        return _layers(self._conn, "judge_labels", self._rowids)


def content_hash(data_json: str, source: str | bytes | None) -> str:
    """SHA-1 of the data's JSON and the source text (as UTF-8 bytes, or given so)."""
    import hashlib  # (loads OpenSSL: not at every start, issue 27)

    h = hashlib.sha1(data_json.encode())
    if source is not None:
        h.update(b"\0")
        h.update(source.encode() if isinstance(source, str) else source)
    return h.hexdigest()


def known_lines(
    db: sqlite_utils.Database, dataset: str, fmt: str, source_name: str
) -> dict[bytes, tuple[int, str, int]]:
    """``line_hash`` -> (rowid, id, position) of the dataset's records that a re-import
    of ``source_name`` as ``fmt`` may skip while their line is unchanged (see
    ``formats.base.KnownLines``). None when the dataset came from another file or
    format (a line's record depends on both), and none whose judge labels a judge run
    rewrote: a re-import gives those the file's labels back, as before."""
    from pathlib import Path

    row = db.conn.execute(
        "SELECT format, source_path FROM datasets WHERE name = ?", (dataset,)
    ).fetchone()
    if row is None or row[0] != fmt or row[1] is None or Path(row[1]).name != source_name:
        return {}
    judged: set[int] = set()
    if db.conn.execute("SELECT 1 FROM judge_runs WHERE dataset = ? LIMIT 1", (dataset,)).fetchone():
        judged = {
            r
            for (r,) in db.conn.execute(
                "SELECT DISTINCT j.record FROM judge_labels j JOIN records r "
                "ON r.rowid = j.record WHERE r.dataset = ? AND j.run IS NOT NULL",
                (dataset,),
            )
        }
    return {
        digest: (rowid, rid, position)
        for digest, rowid, rid, position in db.conn.execute(
            "SELECT source_hash, rowid, id, position FROM records "
            "WHERE dataset = ? AND source_hash IS NOT NULL",
            (dataset,),
        )
        if rowid not in judged
    }


# -- reading ------------------------------------------------------------------------

_RECORD_COLUMNS = (
    "rowid, dataset, position, data, status, reviewed_by, reviewed_at, note, source, source_refs"
)
# the same, the data left to be read with its page when asked for (``_DataPage``)
_COLUMNS_BUT_DATA = _RECORD_COLUMNS.replace(" data,", " NULL,")


_BOOLEANS = {"true": True, "false": False}  # most label values: no parser needed


def label_value(text: str) -> Any:
    """A stored label value (JSON text) back as a value."""
    value = _BOOLEANS.get(text)
    return loads(text) if value is None else value


def _layers(conn, table: str, rowids: list[int]) -> dict[int, dict[str, dict[str, Any]]]:
    out: dict[int, dict[str, dict[str, Any]]] = {r: {} for r in rowids}
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for rec, name, target, value in conn.execute(
            f"SELECT record, name, target, value FROM {table} WHERE record IN ({marks})", chunk
        ):
            out[rec].setdefault(name, {})[target] = label_value(value)
    return out


def _build(
    rows: list[tuple], conn, lazy_judge: bool = False, lines: list[bytes] | None = None
) -> list[StoredRecord]:
    """The page's records; with ``lines`` (its sources decompressed, ``_blobs``) the rows
    were read without their data, which a ``_DataPage`` reads when asked for."""
    rowids = [r[0] for r in rows]
    page = _DataPage(conn, rowids) if lines is not None else None
    judge: Mapping[int, Layer | _JudgePage] = (
        dict.fromkeys(rowids, _JudgePage(conn, rowids))
        if lazy_judge
        else _layers(conn, "judge_labels", rowids)
    )
    human = _layers(conn, "human_labels", rowids)
    out = []
    for rowid, dataset, position, data, status, by, at, note, source, refs in rows:
        out.append(
            _stored(
                rowid,
                dataset,
                position,
                data if page is None else page,
                judge[rowid],
                human[rowid],
                status,
                by,
                at,
                note,
                source,
                refs,
            )
        )
    if lines is not None:  # the page's compressed sources, decompressed (``_blobs``)
        packed = [item for item in out if isinstance(item.stored_source, bytes)]
        for item, line in zip(packed, lines, strict=True):
            item.__dict__["source_bytes"] = line  # (where the cached property keeps it)
    return out


def _stored(*values: Any) -> StoredRecord:
    """``StoredRecord(*values)`` without its frozen ``__init__``, which sets each of the
    twelve fields through ``object.__setattr__``: three times slower, and an export
    builds one per record (issue 27). The fields go straight into the instance dict,
    where ``__init__`` puts them too (the class has no slots)."""
    item = _new(StoredRecord)
    item.__dict__.update(zip(_STORED_FIELDS, values, strict=True))
    return item


_new = object.__new__
_STORED_FIELDS = tuple(f.name for f in fields(StoredRecord))


def _blobs(rows: list[tuple]) -> list[bytes]:
    """The compressed sources of a page's rows (``_RECORD_COLUMNS``' ``source``), in order."""
    return [row[8] for row in rows if isinstance(row[8], bytes)]


def get(db: sqlite_utils.Database, rowid: int) -> StoredRecord:
    rows = db.conn.execute(
        f"SELECT {_RECORD_COLUMNS} FROM records WHERE rowid = ?", (rowid,)
    ).fetchall()
    if not rows:
        raise RagreviewError(f"no record with rowid {rowid}")
    return _build(rows, db.conn)[0]


def find(db: sqlite_utils.Database, record_id: str, dataset: str | None = None) -> StoredRecord:
    """A record by its id (within ``dataset`` when several datasets share the DB)."""
    sql = f"SELECT {_RECORD_COLUMNS} FROM records WHERE id = ?"
    params: list[Any] = [record_id]
    if dataset is not None:
        sql += " AND dataset = ?"
        params.append(dataset)
    rows = db.conn.execute(sql, params).fetchall()
    if not rows:
        where = f" in dataset {dataset!r}" if dataset else ""
        raise RagreviewError(f"no record with id {record_id!r}{where}")
    if len(rows) > 1:
        names = ", ".join(sorted(r[1] for r in rows))
        raise RagreviewError(
            f"record id {record_id!r} is in several datasets ({names}): choose one with --dataset"
        )
    return _build(rows, db.conn)[0]


def iterate(
    db: sqlite_utils.Database,
    dataset: str | None = None,
    *,
    status: str | None = None,
    batch: int = 500,
    lazy_judge: bool = False,
    sources: bool = False,
) -> Iterator[StoredRecord]:
    """Records in file order, loaded in batches so memory stays flat. With
    ``lazy_judge`` a page's judge layers are read only if one is asked for (an export
    writes unreviewed records back from their source alone); with ``sources`` a
    page's compressed sources are decompressed together, on a thread while the page
    before is used (an export writes every one: ``source_blob.Unpacking``), and its
    canonical data is read only if one is asked for."""
    where, params = [], []
    if dataset is not None:
        where.append("dataset = ?")
        params.append(dataset)
    if status is not None:
        where.append("status = ?")
        params.append(status)
    # Keyset paging. Within one dataset the key is (position, rowid): SQLite then seeks
    # the (dataset, position) index to the page's start; with the dataset in the row
    # value it would rescan the dataset's index from its start for every page.
    key = "position, rowid" if dataset is not None else "dataset, position, rowid"
    where.append(f"({key}) > ({', '.join('?' for _ in key.split(','))})")
    clause = " AND ".join(where)
    sql = (
        f"SELECT {_COLUMNS_BUT_DATA if sources else _RECORD_COLUMNS} FROM records "
        f"WHERE {clause} ORDER BY {key} LIMIT ?"
    )
    last: tuple = (-1, -1) if dataset is not None else ("", -1, -1)
    pages = _pages(db.conn, sql, params, last, batch)
    if not sources:
        for rows in pages:
            yield from _build(rows, db.conn, lazy_judge)
        return
    # The next page is read and its sources decompress on a thread while this page's
    # records are used (written): ``source_blob.Unpacking``.
    with source_blob.Unpacking() as unpacking:
        started = ((rows, unpacking.start(_blobs(rows))) for rows in pages)
        for rows, lines in one_ahead(started):
            yield from _build(rows, db.conn, lazy_judge, lines())


def _pages(conn, sql: str, params: list[Any], last: tuple, batch: int) -> Iterator[list[tuple]]:
    """``iterate``'s pages of rows: ``sql`` from after the key ``last`` (the row value
    of ``position, rowid``, with ``dataset`` first when it spans datasets)."""
    while True:
        rows = conn.execute(sql, [*params, *last, batch]).fetchall()
        if not rows:
            return
        yield rows
        end = rows[-1]
        last = (end[2], end[0]) if len(last) == 2 else (end[1], end[2], end[0])


def datasets(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """Every dataset's row, by name. No record counts: counting reads every record (tens
    of ms at 300k) and opening a DB or exporting needs only names, formats and paths;
    ``counts`` gives one dataset's."""
    return [
        dict(zip(("name", "format", "source_path", "imported_at"), row))
        for row in db.conn.execute(
            "SELECT name, format, source_path, imported_at FROM datasets ORDER BY name"
        )
    ]


def source_document(db: sqlite_utils.Database, dataset: str) -> str | None:
    """The non-record parts of a whole-file source, as stored at import."""
    row = db.conn.execute(
        "SELECT source_document FROM datasets WHERE name = ?", (dataset,)
    ).fetchone()
    return None if row is None else row[0]


def counts(db: sqlite_utils.Database, dataset: str) -> Mapping[str, int]:
    return dict(
        db.conn.execute(
            "SELECT status, count(*) FROM records WHERE dataset = ? GROUP BY status", (dataset,)
        )
    )


def get_many(db: sqlite_utils.Database, rowids: list[int]) -> list[StoredRecord]:
    """Several records by rowid (in no particular order), loaded in one pass."""
    out: list[StoredRecord] = []
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows = db.conn.execute(
            f"SELECT {_RECORD_COLUMNS} FROM records WHERE rowid IN ({marks})", chunk
        ).fetchall()
        out.extend(_build(rows, db.conn))
    return out


def human_layers(
    db: sqlite_utils.Database, rowids: list[int]
) -> dict[int, dict[str, dict[str, Any]]]:
    """The human layers of several records."""
    return _layers(db.conn, "human_labels", rowids)


def data_texts(db: sqlite_utils.Database, rowids: list[int]) -> dict[int, str]:
    """The canonical data (JSON text) of several records (a page's worth), by rowid."""
    return _data_texts(db.conn, rowids)


def judge_layers(
    db: sqlite_utils.Database, rowids: list[int]
) -> dict[int, dict[str, dict[str, Any]]]:
    """The judge layers of several records."""
    return _layers(db.conn, "judge_labels", rowids)


def overridden(
    db: sqlite_utils.Database, dataset: str, *, status: str | None = None
) -> Iterator[StoredRecord]:
    """The dataset's records that carry human labels, in file order (an export checks
    these before it writes)."""
    sql = (
        "SELECT rowid FROM records WHERE rowid IN (SELECT DISTINCT record FROM human_labels) "
        "AND dataset = ?"
    )
    params: list[Any] = [dataset]
    if status is not None:
        sql += " AND status = ?"
        params.append(status)
    rowids = [row[0] for row in db.conn.execute(sql + " ORDER BY position, rowid", params)]
    for start in range(0, len(rowids), 500):
        page = get_many(db, rowids[start : start + 500])
        yield from sorted(page, key=lambda item: (item.position, item.rowid))
