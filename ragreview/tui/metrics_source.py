"""The one place the TUI reaches for metrics.

The metric engine (``core.metrics``) and the stored rows (``store.metric_rows``) are
built in parallel with the TUI; until they exist this adapter answers with empty
dicts so the app still runs, and nothing else in the TUI has to care.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core.labels import Layer
from ..core.record import Record

if TYPE_CHECKING:  # sqlite_utils imports click; the model needs no CLI
    import sqlite_utils

try:
    from ..core.metrics import record_metrics as _record_metrics
except ImportError:  # metrics not merged yet
    _record_metrics = None

try:
    from ..store.metric_rows import dataset_summary as _dataset_summary
    from ..store.metric_rows import record_values as _record_values
except ImportError:  # metrics not merged yet
    _dataset_summary = None
    _record_values = None

Values = dict[str, float | None]


def available() -> bool:
    return _dataset_summary is not None or _record_metrics is not None


def record(
    db: sqlite_utils.Database,
    rowid: int,
    rec: Record,
    judge: Layer,
    effective: Layer,
    settings: Mapping[str, Any],
) -> dict[str, Values]:
    """``{"judge": {...}, "effective": {...}}`` for one record."""
    if _record_values is not None:
        return _record_values(db, rowid)
    if _record_metrics is not None:
        return {
            "judge": _record_metrics(rec, judge, settings),
            "effective": _record_metrics(rec, effective, settings),
        }
    return {"judge": {}, "effective": {}}


def dataset(db: sqlite_utils.Database, name: str) -> dict[str, Any]:
    """The dataset summary: ``records``, ``reviewed_records``, ``judge``, ``effective``."""
    if _dataset_summary is not None:
        return _dataset_summary(db, name)
    return {"judge": {}, "effective": {}}
