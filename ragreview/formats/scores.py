"""Per-record metric values for writing the source's own score fields back.

The metric definitions live in ``ragreview.core.metrics`` (SPEC §6); the writers only
map canonical metric names onto each source's field names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.record import Record


def record_values(
    record: Record, layer: Mapping[str, Mapping[str, Any]], settings: Mapping[str, Any]
) -> dict[str, float | None]:
    try:
        from ..core.metrics import record_metrics  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return _temporary_metrics(record, layer, settings)
    return dict(record_metrics(record, layer, settings))


def _temporary_metrics(
    record: Record, layer: Mapping[str, Mapping[str, Any]], settings: Mapping[str, Any]
) -> dict[str, float | None]:
    """TEMPORARY until ``core.metrics`` lands on main: the default variants only
    (TRACe ``ragbench`` count formula, long-form F1@K) so the writers can be tested."""
    out: dict[str, float | None] = {}
    keys = [k for k, _ in record.doc_sentences]
    if record.task == "trace":
        rel = {k for k in keys if layer.get("relevant", {}).get(k)}
        use = {k for k in keys if layer.get("utilized", {}).get(k)}
        total = len(keys)
        out["trace.relevance"] = len(rel) / total if total else 0.0
        out["trace.utilization"] = len(use) / total if total else 0.0
        out["trace.completeness"] = len(rel & use) / len(rel) if rel else 1.0
        sup = layer.get("supported", {})
        out["trace.adherence"] = (
            0.0 if any(sup.get(k) is False for k, _ in record.response) else 1.0
        )
    if record.facts:
        k = int(settings.get("longform.k", 100))
        labels = [layer.get("fact", {}).get(f.key) for f in record.facts]
        s, ns = labels.count("S"), labels.count("NS")
        out["longform.supported"] = s
        out["longform.not_supported"] = ns
        out["longform.irrelevant"] = labels.count("IR")
        if s == 0:
            out["longform.f1_at_k"] = 0.0
        else:
            p, r = s / (s + ns), min(1.0, s / k)
            out["longform.f1_at_k"] = 2 * p * r / (p + r)
    return out
