"""Long-form factuality (FActScore / SAFE): atomic facts judged supported, not
supported or irrelevant (docs/metrics.md)."""

from __future__ import annotations

from typing import Any

from ..core.families import Family, KeyUse, Reasons, Variant
from ..core.keys import fact_key
from ..core.labels import FACT_LABELS, LabelSpec, Layer
from ..core.metrics import longform
from ..core.record import Record
from ._common import dicts, text


def _reasons(rec: Record, src: Any) -> Reasons:
    if not isinstance(src, dict):
        return {}
    side = rec.data.get("safe", {}).get("side") if isinstance(rec.data.get("safe"), dict) else None
    # the source is the eval dict itself, or the per-prompt entry holding it per side
    ev = src.get(f"{side}_posthoc_eval_data", src) if side else src
    statements = dicts(ev.get("checked_statements")) if isinstance(ev, dict) else []
    out: Reasons = {}
    for i, st in enumerate(statements):
        rate = st.get("rate_data")
        if isinstance(rate, dict) and (why := text(rate.get("response"))):
            out[("fact", fact_key(i))] = why
    return out


def _evidence(record: Record, labels: Layer) -> bool:
    """A record of no known task: facts, or a fact label."""
    return bool(record.facts) or bool(labels.get("fact"))


FAMILY = Family(
    "longform",
    "FActScore / SAFE",
    judge_task="facts",  # ragreview judge --task auto
    catalogue=(
        LabelSpec(
            "fact",
            "fact",
            "choice",
            "longform",
            "atomic fact: S supported, NS not supported, IR irrelevant",
            choices=FACT_LABELS,
            positive="S",
        ),
    ),
    keys=(KeyUse("cycle-fact", "f", "S/NS/IR", {"fact": "fact"}),),
    item_labels={"fact": ("fact",)},
    metrics=("longform.",),
    settings=("longform.k",),
    first=("fact",),
    editable=("fact",),
    counts=("longform.supported", "longform.not_supported", "longform.irrelevant"),
    reasons=_reasons,
    compute=longform.metrics,
    evidence=_evidence,
    # (longform.stats; the columns of the metric_stats table (store.metric_stats_writes), in this order)
    stats=tuple((f"longform.{n}", "INTEGER") for n in ("supported", "not_supported", "irrelevant")),
    variants=(Variant("longform.k", longform.DEFAULT_K, int),),
)
