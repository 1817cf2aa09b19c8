"""What a review draw scores each record by, stored per record (``record_signals``,
migration m015), and the one read of a dataset's records in list order that draws use.

``queue --strategy impact`` needs, per record, its judge labels' count and its defined
public judge-layer metric values (``core.queue_signals.impact``). Read from
``judge_labels`` and ``record_metrics`` that is every label and metric row of the
dataset: 4.2 million and 1.5 million rows at 300,000 records, 3-4 s of SQLite before
anything is drawn (issue 27). So each record keeps them in one short row, written where
its metric rows are written (``metric_writes.refresh`` for every change of labels,
``metric_import_writes`` for an import's new records), and dropped where metric rows
are rewritten in SQL (a variant change: ``forget``). A record without a row (an older
import, or after ``forget``) gets it from its stored rows when a draw first needs it
(``ordered``), so a row is either current or absent.

A row holds ``packed``: (name id, value) pairs, little-endian (u32, f64), first (0, its
``judge_labels`` rows), then one per judge-layer metric whose name is public (no
``._``), NaN where its value is NULL (undefined), names numbered from 1 in
``record_signal_names``: a dataset's rows concatenated in one ``group_concat`` are then
split at the (0, size) pairs, with no other column read. A record with a public
stored-layer row (the source's own scores) ends with (0xFFFFFFFF, Σ |stored − judge|),
``queue --strategy stored-mismatch``'s score, which needs no other record; one whose
judge runs gave verdicts with log-probabilities, with (0xFFFFFFFE, the lowest), which
``uncertainty`` scores. Values are the REAL doubles ``record_metrics`` holds, so a score
computed from them is bit for bit the one SQL computed from the metric rows.
"""

from __future__ import annotations

import operator
import sqlite3
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, NamedTuple

from .db import write

# (rowid, judge label count, judge-layer values, stored-layer values, the lowest
# log-probability a judge run gave a verdict of it or None)
Signal = tuple[int, int, Mapping[str, Any], Mapping[str, Any], float | None]

_PAIR = "Id"  # u32 name id, f64 value (with "<": 12 bytes, no padding)
_WIDTH = 12
_NAN = float("nan")
MISMATCH = 0xFFFFFFFF  # the name id of the pair holding stored-mismatch's score
LEAST_LOGPROB = 0xFFFFFFFE  # ... and of the one holding the record's least sure verdict
_TAIL = struct.Struct("<Id")  # one more pair, after the metrics'
_ROWS = 250  # rows per INSERT statement
_UPSERT = " ON CONFLICT (record) DO UPDATE SET packed = excluded.packed"
# Records per read statement: a dataset is read in slices so the concatenated blob of
# one stays moderate (~60 MB at 1,000,000 records with 4 metrics each).
SLICE = 1_000_000
WHOLE = 2_000  # more records missing their signals than this: read the dataset's rows whole


def label_count(judge: Mapping[str, Mapping[str, Any]]) -> int:
    """A judge layer's ``judge_labels`` rows: one per (label, target)."""
    return sum(map(len, judge.values()))


def _name_ids(conn: sqlite3.Connection, names: Iterable[str]) -> dict[str, int]:
    ids = dict(conn.execute("SELECT name, id FROM record_signal_names"))
    new = sorted(set(names) - ids.keys())
    if new:
        conn.executemany("INSERT INTO record_signal_names (name) VALUES (?)", [(n,) for n in new])
        ids = dict(conn.execute("SELECT name, id FROM record_signal_names"))
    return ids


class _Layout(NamedTuple):
    """How the values of a judge dict with these names (in this order) are packed: the
    records of a family share one, so an import's 300,000 cost a few µs each."""

    picks: Any  # the public names' values, by name (itemgetter over the dict's values)
    template: list  # [0, size, id, value, id, value, ...] with the ids in place
    packer: struct.Struct


def _layout(names: tuple[str, ...], ids: dict[str, int]) -> _Layout:
    public = sorted((name, i) for i, name in enumerate(names) if "._" not in name)
    template: list = [0, 0.0]  # the header pair: name id 0 (no name has it), the size
    for name, _ in public:
        template += [ids[name], 0.0]
    picks = operator.itemgetter(*[i for _, i in public]) if public else None
    return _Layout(picks, template, struct.Struct("<" + _PAIR * (1 + len(public))))


def _packed(values: Mapping[str, Any], size: int, layout: _Layout) -> bytes:
    flat = layout.template.copy()
    flat[1] = size
    if layout.picks is not None:
        picked = layout.picks(list(values.values()))
        if len(flat) == 4:
            picked = (picked,)
        if None in picked:  # undefined (NULL; SQLite stores NaN as NULL too): packed as
            picked = [_NAN if v is None else v for v in picked]  # NaN, left out when read
        flat[3::2] = picked
    return layout.packer.pack(*flat)


def _mismatch(
    stored: Mapping[str, Any], judge: Mapping[str, Any], public: Sequence[str]
) -> float | None:
    """``queue_signals.mismatch`` of one record: Σ |stored − judge| over its ``public``
    stored names (sorted) with both values, added in name order as the metric rows were
    read; None when it has no public stored row (a dataset where no record has one
    refuses the strategy)."""
    if not public:
        return None
    total = 0.0
    for name in public:
        sv, jv = stored[name], judge.get(name)
        if sv is not None and jv is not None and sv == sv and jv == jv:
            total += abs(sv - jv)
    return total


def put(conn: sqlite3.Connection, signals: Sequence[Signal]) -> None:
    """Store (replace) these records' signals, in the caller's transaction."""
    if not signals:
        return
    ids: dict[str, int] | None = None
    layouts: dict[tuple[str, ...], _Layout] = {}
    sorted_public: dict[tuple[str, ...], list[str]] = {}  # stored names -> public, sorted
    rows = []
    for rowid, size, values, stored, least_logprob in signals:
        names = tuple(values)
        layout = layouts.get(names)
        if layout is None:
            if ids is None or not ids.keys() >= set(names):
                ids = _name_ids(conn, {n for n in names if "._" not in n})
            layout = layouts[names] = _layout(names, ids)
        packed = _packed(values, size, layout)
        if stored:
            key = tuple(stored)
            public = sorted_public.get(key)
            if public is None:
                public = sorted_public[key] = sorted(n for n in key if "._" not in n)
            mismatch = _mismatch(stored, values, public)
            if mismatch is not None:
                packed += _TAIL.pack(MISMATCH, mismatch)
        if least_logprob is not None:
            packed += _TAIL.pack(LEAST_LOGPROB, least_logprob)
        rows.append((rowid, packed))
    for start in range(0, len(rows), _ROWS):  # multi-row statements: an import's cost
        part = rows[start : start + _ROWS]
        sql = "INSERT INTO record_signals (record, packed) VALUES " + ", ".join(
            ["(?, ?)"] * len(part)
        )
        conn.execute(sql + _UPSERT, list(chain.from_iterable(part)))


def forget(conn: sqlite3.Connection, dataset: str) -> None:
    """Drop the dataset's signals (its metric rows were rewritten in SQL): the next draw
    that needs them recomputes them from the rows."""
    conn.execute(
        "DELETE FROM record_signals WHERE record IN (SELECT rowid FROM records WHERE dataset = ?)",
        (dataset,),
    )


def from_rows(conn: sqlite3.Connection, rowids: Sequence[int]) -> list[Signal]:
    """These records' signals as their stored label and metric rows give them."""
    out: list[Signal] = []
    for start in range(0, len(rowids), 500):
        chunk = list(rowids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        sizes = (
            f"SELECT record, count(*) FROM judge_labels WHERE record IN ({marks}) GROUP BY record"
        )
        rows = (
            "SELECT record, layer, name, value FROM record_metrics WHERE record IN "
            f"({marks}) AND layer IN ('judge', 'stored') AND instr(name, '._') = 0"
        )
        counts = dict(conn.execute(sizes, chunk))  # (a record without labels: none)
        least = dict(conn.execute(least_logprobs(len(chunk)), chunk))
        out += _signals({r: counts.get(r, 0) for r in chunk}, conn.execute(rows, chunk), least)
    return out


def from_dataset(conn: sqlite3.Connection, dataset: str) -> list[Signal]:
    """``from_rows`` for every record of a dataset, in two scans rather than a pair of
    look-ups per 500 records (at 300,000 records the look-ups took 10 s of CPU, the scans 8)."""
    sizes = (
        "SELECT r.rowid, (SELECT count(*) FROM judge_labels l WHERE l.record = r.rowid) "
        "FROM records r WHERE r.dataset = ?"
    )
    rows = (
        "SELECT m.record, m.layer, m.name, m.value FROM records r JOIN record_metrics m "
        "ON m.record = r.rowid AND m.layer IN ('judge', 'stored') "
        "WHERE r.dataset = ? AND instr(m.name, '._') = 0"
    )
    least = (
        "SELECT l.record, min(l.logprob) FROM run_labels l JOIN records r ON r.rowid = l.record "
        "WHERE r.dataset = ? AND l.logprob IS NOT NULL GROUP BY l.record"
    )
    return _signals(
        dict(conn.execute(sizes, (dataset,))),
        conn.execute(rows, (dataset,)),
        dict(conn.execute(least, (dataset,))),
    )


def least_logprobs(count: int) -> str:
    """SQL for (record, its lowest verdict log-probability) of ``count`` given records
    that have one (by the ``run_labels_record`` index)."""
    marks = ",".join("?" * count)
    return (
        f"SELECT record, min(logprob) FROM run_labels WHERE record IN ({marks}) "
        "AND logprob IS NOT NULL GROUP BY record"
    )


def _signals(
    counts: dict[int, int], rows: Iterable[tuple], least: Mapping[int, float]
) -> list[Signal]:
    """Signals of the records ``counts`` gives the label counts of, from their metric rows
    (record, layer, name, value) and ``least`` log-probabilities."""
    judge: dict[int, dict[str, Any]] = {r: {} for r in counts}
    stored: dict[int, dict[str, Any]] = {r: {} for r in counts}
    for rowid, layer, name, value in rows:
        (judge if layer == "judge" else stored)[rowid][name] = value
    return [(r, counts[r], judge[r], stored[r], least.get(r)) for r in counts]


# -- reading ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Ordered:
    """A dataset's records in list order, as numpy arrays; with ``signals``: each
    record's judge label count, and its metric values as entries (record index, name
    id, value)."""

    rowids: Any  # int64[N]
    sizes: Any = None  # int64[N]
    entry_record: Any = None  # intp[E]: index into rowids
    entry_name: Any = None  # uint32[E]
    entry_value: Any = None  # float64[E]
    mismatch: Any = None  # float64[N]: stored-mismatch's score (0 where none)
    any_stored: bool = False  # some record has a stored score
    least_logprob: Any = None  # float64[N]: its least sure verdict's (NaN where none)


def ordered(conn: sqlite3.Connection, dataset: str, *, signals: bool = False) -> Ordered:
    """The dataset's records in list order (position, then rowid), and with ``signals``
    their signals, records without a stored row getting theirs first (a write)."""
    got = _read(conn, dataset, signals)
    if got is None:
        missing = [
            r
            for (r,) in conn.execute(
                "SELECT r.rowid FROM records r LEFT JOIN record_signals s ON s.record = r.rowid "
                "WHERE r.dataset = ? AND s.record IS NULL",
                (dataset,),
            )
        ]
        with write(conn):
            if len(missing) > WHOLE:  # (a whole dataset, after a variant change)
                put(conn, from_dataset(conn, dataset))
            else:
                put(conn, from_rows(conn, missing))
        got = _read(conn, dataset, signals)
        assert got is not None, "record_signals still incomplete after filling them"
    return got


def _read(conn: sqlite3.Connection, dataset: str, signals: bool) -> Ordered | None:
    """One read transaction (the slices see the same records); the rows come back as
    one concatenated text or blob per column (SQLite's ``group_concat``), which numpy
    parses without a Python object per record: reading 300,000 rowids as tuples was
    most of what ``queue --strategy random`` did after starting up. None when some
    record has no signal row."""
    import numpy as np

    columns = "count(*), group_concat(r.position), group_concat(r.rowid)"
    joined = ""
    if signals:  # (a BLOB's bytes concatenate as they are: the length is checked below)
        columns += ", count(s.record), CAST(group_concat(s.packed, '') AS BLOB)"
        joined = " LEFT JOIN record_signals s ON s.record = r.rowid"
    first = (
        f"SELECT {columns} FROM (SELECT rowid, position FROM records WHERE dataset = ? "
        f"ORDER BY position, rowid LIMIT {SLICE}) r{joined}"
    )
    after = (
        f"SELECT {columns} FROM (SELECT rowid, position FROM records WHERE dataset = ? "
        f"AND (position, rowid) > (?, ?) ORDER BY position, rowid LIMIT {SLICE}) r{joined}"
    )
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    parts: list[tuple] = []  # per slice: (positions, rowids[, with a row, blob])
    try:
        row = conn.execute(first, (dataset,)).fetchone()
        while row[0]:
            if signals and row[3] < row[0]:
                return None
            positions, rowids = _ints(row[1], row[0]), _ints(row[2], row[0])
            parts.append((positions, rowids, *row[4:]))
            if row[0] < SLICE:
                break
            top = positions.max()  # the slice's last record in list order
            last = (int(top), int(rowids[positions == top].max()))
            row = conn.execute(after, (dataset, *last)).fetchone()
    finally:
        if own:
            conn.commit()
    empty = np.zeros(0, dtype=np.int64)
    positions = np.concatenate([empty] + [p[0] for p in parts])
    rowids = np.concatenate([empty] + [p[1] for p in parts])
    order = _list_order(positions, rowids)
    if not signals:
        return Ordered(rowids if order is None else rowids[order])
    blob = b"".join(p[2] or b"" for p in parts) if len(parts) > 1 else (parts[0][2] or b"")
    if len(blob) % _WIDTH:
        raise ValueError(f"record_signals of {dataset!r}: {len(blob)} bytes, not pairs")
    pairs = np.frombuffer(blob, dtype=np.dtype([("name", "<u4"), ("value", "<f8")]))
    header = pairs["name"] == 0  # each row starts with (0, its label count)
    if int(header.sum()) != len(rowids):
        raise ValueError(f"record_signals of {dataset!r}: not one row per record")
    entry_record = np.cumsum(header) - 1
    sizes = pairs["value"][header].astype(np.int64)
    mismatches = pairs["name"] == MISMATCH
    mismatch = np.zeros(len(rowids))
    mismatch[entry_record[mismatches]] = pairs["value"][mismatches]
    leasts = pairs["name"] == LEAST_LOGPROB
    least_logprob = np.full(len(rowids), np.nan)
    least_logprob[entry_record[leasts]] = pairs["value"][leasts]
    # (NaN: the metric's value is NULL)
    values = ~header & ~mismatches & ~leasts & ~np.isnan(pairs["value"])
    entry_record = entry_record[values]
    if order is not None:  # (SQLite gave the rows out of its subquery's order)
        new_index = np.empty_like(order)
        new_index[order] = np.arange(len(order))
        entry_record = new_index[entry_record]
        rowids, sizes, mismatch = rowids[order], sizes[order], mismatch[order]
        least_logprob = least_logprob[order]
    return Ordered(
        rowids,
        sizes,
        entry_record,
        pairs["name"][values],
        pairs["value"][values],
        mismatch,
        bool(mismatches.any()),
        least_logprob,
    )


def _ints(text: str | None, count: int) -> Any:
    """A ``group_concat`` of ``count`` integers as an int64 array."""
    import numpy as np

    out = np.fromstring(text or "", dtype=np.int64, sep=",") if count else np.zeros(0, np.int64)
    if len(out) != count:
        raise ValueError(f"expected {count} integers from SQLite, parsed {len(out)}")
    return out


def _list_order(positions: Any, rowids: Any) -> Any:
    """None when the records are in list order (position, then rowid), as SQLite gives
    an aggregate's rows in its subquery's order; else the order that sorts them (the
    SQL documents the order of ``group_concat`` as arbitrary)."""
    import numpy as np

    if len(rowids) < 2:
        return None
    dp, dr = np.diff(positions), np.diff(rowids)
    if bool(np.all((dp > 0) | ((dp == 0) & (dr > 0)))):
        return None
    return np.lexsort((rowids, positions))
