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
from collections.abc import Iterable, Mapping
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
# record_metrics rows of the judge layer and of the stored layer, each end to end
# (record, name, value, record, …: bulk.insert_flat; the layer is written into the
# statement, not bound per row), metric_totals increments, metric_stats rows of the
# judge layer (without the layer), record_signals
Rows = tuple[list[Any], list[Any], list[tuple], list[tuple], list[record_signals.Signal]]


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


def rows_for_new(dataset: str, new: Iterable[tuple[int, Values]]) -> Rows:
    """The metric rows of records created by this import (no metric rows yet, no human
    layer), and the increments of the dataset's running sums; ``store`` writes them."""
    judge_rows: list[Any] = []
    stored_rows: list[Any] = []
    stats_rows: list[tuple] = []
    signals: list[record_signals.Signal] = []
    # name -> [n, total, total_sq, undefined] over the batch's judge values (NULL ones
    # counted as undefined); the effective layer's sums are the same (no human layer),
    # so they are written twice: the sums count every record's effective values, stored
    # or not
    sums: dict[str, list] = {COUNT: [0, 0.0, 0.0, 0]}
    count = sums[COUNT]
    for rowid, (judge, stored, stats, size) in new:
        signals.append((rowid, size, judge, stored, None))  # (an import gives no logprobs)
        # (no effective rows: without human labels the effective layer is the judge
        # layer, which the readers fall back to: metric_layers)
        stats_rows.append((rowid, *stats))
        for name, value in stored.items():
            stored_rows += (rowid, name, value)
        judge_rows += (rowid, COUNT, 1.0)
        count[0] += 1
        count[1] += 1.0
        count[2] += 1.0
        for name, value in judge.items():
            judge_rows += (rowid, name, value)
            s = sums.get(name)
            if s is None:
                s = sums[name] = [0, 0.0, 0.0, 0]
            if value is None:
                s[3] += 1
            else:
                s[0] += 1
                s[1] += value
                s[2] += value * value
    if not count[0]:
        return [], [], [], [], []
    totals = [(dataset, "judge", name, *s) for name, s in sums.items()]
    totals += [(dataset, "effective", name, *s) for name, s in sums.items() if name != COUNT]
    return judge_rows, stored_rows, totals, stats_rows, signals


def store(conn: sqlite3.Connection, rows: Rows) -> None:
    """Write ``rows_for_new``'s rows in the caller's transaction."""
    judge_rows, stored_rows, totals, stats_rows, signals = rows
    if not totals:
        return
    dataset = totals[0][0]
    older = not has_totals(conn, dataset) and _has_other_records(
        conn, dataset, set(judge_rows[::3])
    )
    columns = ("record", "name", "value")
    bulk.insert_flat(conn, "record_metrics", columns, judge_rows, fixed=_JUDGE)
    bulk.insert_flat(conn, "record_metrics", columns, stored_rows, fixed={"layer": "'stored'"})
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
