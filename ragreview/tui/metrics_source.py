"""The one place the TUI reads metrics: the stored per-record rows and the running
dataset sums kept by ``store.metric_rows`` in the same transaction as every label."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..store import metric_rows

if TYPE_CHECKING:  # sqlite_utils imports click; the model needs no CLI
    import sqlite_utils

Values = dict[str, float | None]


def record(db: sqlite_utils.Database, rowid: int) -> dict[str, Values]:
    """``{"judge": {...}, "effective": {...}}`` for one record."""
    return metric_rows.record_values(db, rowid)


def dataset(db: sqlite_utils.Database, name: str) -> dict[str, Any]:
    """``records``, ``reviewed_records``, ``judge``, ``effective`` (no rescan of records)."""
    return metric_rows.dataset_summary(db, name)
