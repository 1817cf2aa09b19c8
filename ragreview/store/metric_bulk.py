"""Metric rows of records an import has just created: the bulk path of ``metric_rows``.

A record the importer inserted in this transaction has no metric rows yet and (unless
the file carried human labels for it) no human layer, so its effective values are its
judge values. ``metric_rows.refresh`` would still read the (absent) old rows, upsert
each row and move the running sums key by key; here the rows go in by plain inserts
and the batch's sums are added once per metric. The values stored are exactly those
``refresh`` computes (the same ``core.metrics`` calls), which the tests pin by
comparing with a recomputation from scratch.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..core import metrics
from ..core.labels import Layer
from ..core.record import Record
from .metric_rows import COUNT, _settings, _with_source

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

New = tuple[int, Record, Layer, str | None]  # rowid, record, judge layer, source text


def insert_new(db: sqlite_utils.Database, dataset: str, new: Iterable[New]) -> None:
    """Store the metric rows of records created by this import (no metric rows yet,
    no human layer) and add them to the dataset's running sums. Runs in the caller's
    transaction."""
    settings = _settings(db, dataset, {})
    rows: list[tuple] = []
    # name -> [n, total, total_sq] over the batch's non-NULL judge values; the
    # effective layer's sums are the same (no human layer), so they are written twice
    sums: dict[str, list] = {COUNT: [0, 0.0, 0.0]}
    count = sums[COUNT]
    for rowid, record, judge_layer, source in new:
        record = _with_source(record, source)
        judge = metrics.record_values(record, judge_layer, settings, judge=judge_layer)
        rows += [(rowid, "judge", n, v) for n, v in judge.items()]
        rows += [(rowid, "effective", n, v) for n, v in judge.items()]
        stored = metrics.stored_pairs(record, settings)
        rows += [(rowid, "stored", n, v) for n, v in stored.items()]
        rows.append((rowid, "judge", COUNT, 1.0))
        count[0] += 1
        count[1] += 1.0
        count[2] += 1.0
        for name, value in judge.items():
            if value is not None:
                s = sums.get(name)
                if s is None:
                    s = sums[name] = [0, 0.0, 0.0]
                s[0] += 1
                s[1] += value
                s[2] += value * value
    if not count[0]:
        return
    conn = db.conn
    conn.executemany(
        "INSERT INTO record_metrics (record, layer, name, value) VALUES (?, ?, ?, ?)", rows
    )
    totals = [(dataset, "judge", name, *s) for name, s in sums.items()]
    totals += [(dataset, "effective", name, *s) for name, s in sums.items() if name != COUNT]
    conn.executemany(
        "INSERT INTO metric_totals (dataset, layer, name, n, total, total_sq) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (dataset, layer, name) DO UPDATE SET "
        "n = n + excluded.n, total = total + excluded.total, "
        "total_sq = total_sq + excluded.total_sq",
        totals,
    )
