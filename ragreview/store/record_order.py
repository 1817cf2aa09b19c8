"""The one read of a dataset's records in list order that review draws use, with their
signals (``store.record_signals``) as numpy arrays: ``ordered``. Apart from the signals'
writes, which every label change makes: a ``label`` / ``mark`` call never draws, and
built this module's dataclass at every start (issue 27).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from .db import write
from .record_signals import LEAST_LOGPROB, MISMATCH, from_dataset, from_rows, put

_WIDTH = 12  # bytes of one packed (u32 name id, f64 value) pair
# Records per read statement: a dataset is read in slices so the concatenated blob of
# one stays moderate (~60 MB at 1,000,000 records with 4 metrics each).
SLICE = 1_000_000
WHOLE = 2_000  # more records missing their signals than this: read the dataset's rows whole


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
