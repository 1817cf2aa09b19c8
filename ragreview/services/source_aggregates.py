"""The dataset-level values a source file states about itself (RAGChecker's aggregate
``metrics``) against the same values recomputed from the judge's labels: rows of the
stored-vs-recomputed table that ``ragreview metrics`` prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..formats import ragchecker
from ..store import metric_summary_reads
from ..store import records as store_records

if TYPE_CHECKING:
    import sqlite_utils


def compare(
    db: sqlite_utils.Database, dataset: str, tolerance: float = 1e-9
) -> dict[str, dict[str, Any]]:
    """Per aggregate the file states: one comparison (``n`` 1), whether it disagrees
    with the recomputed value, and by how much (as ``metric_summary_reads.stored_comparison``)."""
    formats = {row["name"]: row["format"] for row in store_records.datasets(db)}
    if formats.get(dataset) != ragchecker.NAME:
        return {}
    stated = ragchecker.stored_aggregates(store_records.source_document(db, dataset))
    judge = metric_summary_reads.dataset_summary(db, dataset)["judge"]
    out: dict[str, dict[str, Any]] = {}
    for name, value in stated.items():
        ours = judge.get(name)
        diff = None if value is None or ours is None else abs(value - ours)
        out[name] = {  # (n 1: the file states it once)
            "n": 1,
            "disagree": int(diff is None and value != ours or (diff or 0) > tolerance),
            "max_abs_diff": diff,
            "rmse": diff,
        }
    return out
