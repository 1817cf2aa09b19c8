"""Metric rows of records an import has just created: the bulk path of ``metric_writes``.

A record the importer inserted in this transaction has no metric rows yet and (unless
the file carried human labels for it) no human layer, so its effective values are its
judge values: only its judge and stored rows are written (a record's effective layer is
stored only while it has human labels: ``metric_layers``). ``metric_writes.refresh``
would still read the (absent) old rows, upsert each row and move the running sums key by
key; here the rows go in by plain inserts and the batch's sums are added once per
metric. The values stored are exactly those ``refresh`` computes (the same
``core.metrics`` calls), which the tests pin by comparing with a recomputation from
scratch.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from functools import lru_cache, reduce
from itertools import chain
from operator import add, mul
from typing import Any

from ..core import metrics
from ..core.labels import Layer
from ..core.metrics.aggregate import stored_f1
from ..core.record import Record
from . import bulk, metric_stats_writes, record_signals
from .metric_writes import COUNT, _with_source, add_totals, has_totals, recompute

# A new record's metric values: (judge values, stored values, its metric_stats row
# without record and layer, its judge label count); the effective layer is the judge
# layer while the record has no human labels.
Values = tuple[dict[str, float | None], dict[str, float | None], tuple, int]
# record_metrics rows of the judge layer and of the stored layer (``_Layered``),
# metric_totals increments, metric_stats rows of the judge layer (without the layer),
# record_signals
Rows = tuple["_Layered", "_Layered", list[tuple], list[tuple], list[record_signals.Signal]]


_JUDGE = {"layer": "'judge'"}  # (bulk.insert's fixed columns)


def new_record_values(
    record: Record, judge: Layer, source: str | None, settings: Mapping[str, Any]
) -> Values:
    """The metric values a new record without human labels stores (no DB needed)."""
    record = _with_source(record, source)
    stats: dict[str, Any] = {}
    values = metrics.record_values(record, judge, settings, judge=judge, stats=stats)
    stats_row = metric_stats_writes.row(0, "judge", stats, stored_f1(record))[2:]
    size = record_signals.label_count(judge)
    return values, metrics.stored_pairs(record, settings), stats_row, size


def rows_for_new(dataset: str, new: Sequence[tuple[int, Values]]) -> Rows:
    """The metric rows of records created by this import (no metric rows yet, no human
    layer), and the increments of the dataset's running sums; ``store`` writes them."""
    if not new:
        return _Layered([]), _Layered([]), [], [], []
    judge = _Layered([(rowid, values[0]) for rowid, values in new])
    stored = _Layered([(rowid, values[1]) for rowid, values in new])
    stats_rows = [(rowid, *values[2]) for rowid, values in new]
    # (an import gives no logprobs)
    signals: list[record_signals.Signal] = [
        (rowid, size, j, s, None) for rowid, (j, s, _, size) in new
    ]
    # name -> [n, total, total_sq, undefined] over the batch's judge values (NULL ones
    # counted as undefined), each added in record order; the effective layer's sums are
    # the same (no human layer), so they are written twice: the sums count every
    # record's effective values, stored or not
    n = len(new)
    sums: dict[str, list] = {COUNT: [n, float(n), float(n), 0]}  # (1.0 added n times)
    sums.update(judge.sums())
    totals = [(dataset, "judge", name, *s) for name, s in sums.items()]
    totals += [(dataset, "effective", name, *s) for name, s in sums.items() if name != COUNT]
    return judge, stored, totals, stats_rows, signals


class _Layered:
    """One layer's metric rows of a batch of new records: (rowid, {name: value}) each.
    Where every record has the same names in the same order (a family's records do),
    each record's values are bound as a tuple, the names written into the statement
    (``store``), and summed per name over the batch's columns: no Python loop per
    value (issue 27: about 15 metric rows per RAGBench record)."""

    def __init__(self, records: list[tuple[int, Mapping[str, Any]]]) -> None:
        self.records = records
        names = tuple(records[0][1]) if records else ()
        self.names: tuple | None = names
        for _, values in records:
            if tuple(values) != names:
                self.names = None  # names differ between records: row by row
                break

    def flat_rows(self) -> list[Any]:
        """The rows end to end (record, name, value, record, …: bulk.insert_flat)."""
        out: list[Any] = []
        for rowid, values in self.records:
            for name, value in values.items():
                out += (rowid, name, value)
        return out

    def sums(self) -> dict[str, list]:
        """name -> [n, total, total_sq, undefined] of the values, each total added in
        record order from 0.0 (the same additions, so the same sums, as a running
        total per value)."""
        out: dict[str, list] = {}
        if self.names is not None:
            columns = zip(*[tuple(values.values()) for _, values in self.records], strict=True)
            for name, column in zip(self.names, columns, strict=True):
                defined = [v for v in column if v is not None] if None in column else column
                out[name] = [
                    len(defined),
                    reduce(add, defined, 0.0),
                    reduce(add, map(mul, defined, defined), 0.0),
                    len(column) - len(defined),
                ]
            return out
        for _, values in self.records:
            for name, value in values.items():
                s = out.get(name)
                if s is None:
                    s = out[name] = [0, 0.0, 0.0, 0]
                if value is None:
                    s[3] += 1
                else:
                    s[0] += 1
                    s[1] += value
                    s[2] += value * value
        return out


def _insert_layer(conn: sqlite3.Connection, layer: str, rows: _Layered, count: bool) -> None:
    """Write a layer's rows (with ``count``, each record's ``record._count`` row too)."""
    if not rows.records:
        return
    names = rows.names
    if names is None:  # (names differ between the batch's records: rows end to end)
        flat = rows.flat_rows()
        if count:
            flat += chain.from_iterable((rowid, COUNT, 1.0) for rowid, _ in rows.records)
        bulk.insert_flat(
            conn, "record_metrics", ("record", "name", "value"), flat, fixed={"layer": f"'{layer}'"}
        )
        return
    if not names and not count:
        return
    params = [(rowid, *values.values()) for rowid, values in rows.records]
    width = 1 + len(names)
    limit = min(bulk.VARIABLES_PER_STATEMENT, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
    per = max(1, min(_RECORDS_PER_STATEMENT, limit // width))
    full = len(params) - len(params) % per
    if full:
        sql = _statement(layer, names, count, per)
        for start in range(0, full, per):
            conn.execute(sql, list(chain.from_iterable(params[start : start + per])))
    if full < len(params):
        conn.executemany(_statement(layer, names, count, 1), params[full:])


_RECORDS_PER_STATEMENT = 50


@lru_cache(maxsize=32)
def _statement(layer: str, names: tuple, count: bool, records: int) -> str:
    """INSERT of ``records`` records' rows of one layer, each record's parameters its
    rowid and then its values in ``names`` order: the names (and the layer) are written
    into the statement as literals, not bound per row (issue 27: a bound text costs a
    copy and an allocation, and an import writes about 11 metric rows per record)."""
    width = 1 + len(names)
    lit = _literal(layer)
    groups = []
    for r in range(records):
        base = r * width + 1
        if count:
            groups.append(f"(?{base}, {_literal(COUNT)}, 1.0, {lit})")
        groups += [
            f"(?{base}, {_literal(name)}, ?{base + 1 + i}, {lit})" for i, name in enumerate(names)
        ]
    return "INSERT INTO record_metrics (record, name, value, layer) VALUES " + ", ".join(groups)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def store(conn: sqlite3.Connection, rows: Rows) -> None:
    """Write ``rows_for_new``'s rows in the caller's transaction."""
    judge, stored, totals, stats_rows, signals = rows
    if not totals:
        return
    dataset = totals[0][0]
    older = not has_totals(conn, dataset) and _has_other_records(
        conn, dataset, {rowid for rowid, _ in judge.records}
    )
    _insert_layer(conn, "judge", judge, count=True)
    _insert_layer(conn, "stored", stored, count=False)
    stats_columns = [c for c in metric_stats_writes.columns() if c != "layer"]
    bulk.insert_present(conn, "metric_stats", stats_columns, stats_rows, fixed=_JUDGE)
    record_signals.put(conn, signals)
    if older:
        # the dataset's older records have no sums (an older build's DB): moving sums
        # would leave them partial; recompute the dataset whole instead
        import sqlite_utils

        recompute(sqlite_utils.Database(conn, execute_plugins=False), dataset)
    else:
        add_totals(conn, totals)


def _has_other_records(conn: sqlite3.Connection, dataset: str, rowids: set[int]) -> bool:
    for (rowid,) in conn.execute("SELECT rowid FROM records WHERE dataset = ?", (dataset,)):
        if rowid not in rowids:
            return True
    return False
