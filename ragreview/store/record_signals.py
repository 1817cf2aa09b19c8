"""What a review draw scores each record by, stored per record (``record_signals``,
migration m015); the one read of a dataset's records in list order that draws use is
``store.record_order``.

``queue --strategy impact`` needs, per record, its judge labels' count and its defined
public judge-layer metric values (``core.queue_signals.impact``). Read from
``judge_labels`` and ``record_metrics`` that is every label and metric row of the
dataset: 4.2 million and 1.5 million rows at 300,000 records, 3-4 s of SQLite before
anything is drawn (issue 27). So each record keeps them in one short row, written where
its metric rows are written (``metric_writes.refresh`` for every change of labels,
``metric_import_writes`` for an import's new records), and dropped where metric rows
are rewritten in SQL (a variant change: ``forget``). A record without a row (an older
import, or after ``forget``) gets it from its stored rows when a draw first needs it
(``record_order.ordered``), so a row is either current or absent.

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
from itertools import chain
from typing import Any, NamedTuple

# (rowid, judge label count, judge-layer values, stored-layer values, the lowest
# log-probability a judge run gave a verdict of it or None)
Signal = tuple[int, int, Mapping[str, Any], Mapping[str, Any], float | None]

_PAIR = "Id"  # u32 name id, f64 value (with "<": 12 bytes, no padding)
_NAN = float("nan")
MISMATCH = 0xFFFFFFFF  # the name id of the pair holding stored-mismatch's score
LEAST_LOGPROB = 0xFFFFFFFE  # ... and of the one holding the record's least sure verdict
_TAIL = struct.Struct("<Id")  # one more pair, after the metrics'
_ROWS = 250  # rows per INSERT statement
_UPSERT = " ON CONFLICT (record) DO UPDATE SET packed = excluded.packed"


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
