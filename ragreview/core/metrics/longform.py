"""Long-form factuality (SAFE / FActScore), docs/metrics.md, after SAFE's eval/metric_utils.py.

Counts of ``fact`` labels over the record's own facts (S, NS, IR), precision
S / (S + NS), recall@K = min(1, S / K), F1@K = 0 when S = 0 (SAFE returns 0 before
computing precision) else 2PR / (P + R). Irrelevant facts are ignored. A record with no
labelled fact (an abstention) has no long-form metrics at all, so dataset means run over
records with at least one labelled fact, as SAFE's comparison with FActScore counts
them. F1 at K = 64 and 178 (the paper's values) are given beside the configured K.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..labels import Layer
from ..record import Record
from .common import Values, setting

LABELS = ("fact",)
DEFAULT_K = 100
PAPER_KS = (64, 178)
NAMES = (
    "longform.supported",
    "longform.not_supported",
    "longform.irrelevant",
    "longform.precision",
    "longform.recall_at_k",
    "longform.f1_at_k",
    *(f"longform.f1_at_{k}" for k in PAPER_KS),
)


def f1_at_k(supported: int, not_supported: int, k: int) -> float:
    """SAFE's ``calculate_metrics``."""
    if k <= 0:
        raise ValueError("K must be positive")
    if supported == 0:
        return 0.0
    precision = supported / (supported + not_supported)
    recall = min(1.0, supported / k)
    return 2 * precision * recall / (precision + recall)


def stats(record: Record, labels: Layer) -> Values:
    """The layer's S, NS and IR counts over the record's facts: every K's values follow
    from these (``values``), so a change of K needs no pass over the records."""
    verdicts = labels.get("fact") or {}
    counts = {"S": 0, "NS": 0, "IR": 0}
    for fact in record.facts:
        value = verdicts.get(fact.key)
        if value in counts:
            counts[value] += 1
    return {
        "longform.supported": counts["S"],
        "longform.not_supported": counts["NS"],
        "longform.irrelevant": counts["IR"],
    }


def values(s: Mapping[str, Any], k: int) -> Values:
    """The per-record values at K from ``stats``."""
    supported, not_supported = s["longform.supported"], s["longform.not_supported"]
    irrelevant = s["longform.irrelevant"]
    if supported + not_supported + irrelevant == 0:
        return dict.fromkeys(NAMES)
    out: Values = {
        "longform.supported": float(supported),
        "longform.not_supported": float(not_supported),
        "longform.irrelevant": float(irrelevant),
        "longform.precision": (
            supported / (supported + not_supported) if supported + not_supported else None
        ),
        "longform.recall_at_k": min(1.0, supported / k),
        "longform.f1_at_k": f1_at_k(supported, not_supported, k),
    }
    for paper_k in PAPER_KS:
        out[f"longform.f1_at_{paper_k}"] = f1_at_k(supported, not_supported, paper_k)
    return out


def metrics(
    record: Record,
    labels: Layer,
    settings: Mapping[str, Any],
    *,
    judge: Layer | None = None,
    into: dict[str, Any] | None = None,
) -> Values:
    """The values at the configured K; ``into`` (when given) also receives ``stats``."""
    k = int(setting(settings, "longform.k", DEFAULT_K))
    s = stats(record, labels)
    if into is not None:
        into.update(s)
    return values(s, k)
