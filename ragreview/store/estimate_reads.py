"""Reads behind the corrected estimate (``services.estimates``, docs/estimate.md): the
judge's running sums, a few records' metric values and statuses, the record count."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import bulk, metric_reads

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils


def judge_sums(db: sqlite_utils.Database, dataset: str) -> dict[str, tuple[int, float]]:
    """Per metric (and rate component): records where the judge's value is defined, and
    the sum of those values (the running sums; no scan)."""
    return {
        name: (n, total)
        for name, n, total in db.conn.execute(
            "SELECT name, n, total FROM metric_totals WHERE dataset = ? AND layer = 'judge'",
            (dataset,),
        )
    }


def metric_values(
    db: sqlite_utils.Database, rowids: list[int]
) -> dict[int, dict[str, dict[str, float | None]]]:
    """Judge and effective values, components included, of a few records (the used ones)."""
    out: dict[int, dict[str, dict[str, float | None]]] = {}
    for rowid, layer, name, value in metric_reads.layer_rows(db, rowids):
        out.setdefault(rowid, {}).setdefault(layer, {})[name] = value
    return out


def statuses(db: sqlite_utils.Database, rowids: list[int]) -> dict[int, str]:
    """The review status of a few records."""
    return dict(
        bulk.rows_in(db.conn, "SELECT rowid, status FROM records WHERE rowid IN ({ids})", rowids)
    )


def record_count(db: sqlite_utils.Database, dataset: str) -> int:
    """The dataset's records now (counted, so a record added since any sum is seen)."""
    (count,) = db.conn.execute(
        "SELECT count(*) FROM records WHERE dataset = ?", (dataset,)
    ).fetchone()
    return count
