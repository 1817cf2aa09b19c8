"""Per-record metric values for writing the source's own score fields back.

The metric definitions live in ``ragreview.core.metrics`` (docs/metrics.md); the writers only
map canonical metric names onto each source's field names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.metrics import record_metrics
from ..core.record import Record

Layer = Mapping[str, Mapping[str, Any]]


def record_values(
    record: Record, layer: Layer, settings: Mapping[str, Any], judge: Layer
) -> dict[str, float | None]:
    """Every per-record metric of ``layer``. ``judge`` is the record's judge layer,
    which RAGBench's raw label-list counts are relative to."""
    return dict(record_metrics(record, layer, settings, judge=judge))
