"""RAGBench / TRACe: document sentences judged relevant and utilized, response
sentences supported, with the keys that support them (docs/metrics.md)."""

from __future__ import annotations

from typing import Any

from ..core.families import Family, KeyUse, Reasons, Variant
from ..core.labels import LabelSpec
from ..core.metrics import trace
from ..core.record import Record
from ._common import dicts, text


def _reasons(rec: Record, src: Any) -> Reasons:
    out: Reasons = {}
    if not isinstance(src, dict):
        return out
    for entry in dicts(src.get("sentence_support_information")):
        key, why = entry.get("response_sentence_key"), text(entry.get("explanation"))
        if isinstance(key, str) and why:
            out[("supported", key)] = why
    for name, column in (
        ("relevant", "relevance_explanation"),
        ("supported", "overall_supported_explanation"),
    ):
        if why := text(src.get(column)):
            out[(name, "*")] = why
    return out


FAMILY = Family(
    "trace",
    "RAGBench / TRACe",
    judge_task="trace",  # ragreview judge --task auto
    catalogue=(
        LabelSpec(
            "relevant",
            "doc",
            "bool",
            "trace",
            "the document sentence is useful to answer the question",
            default=False,
        ),
        LabelSpec(
            "utilized",
            "doc",
            "bool",
            "trace",
            "the response used the document sentence",
            default=False,
        ),
        LabelSpec(
            "supported",
            "response",
            "bool",
            "trace",
            "the response sentence is fully supported by the documents",
        ),
        LabelSpec(
            "support_keys",
            "response",
            "keys",
            "trace",
            "document sentences (or special tokens) that support the response sentence",
        ),
    ),
    keys=(
        KeyUse("toggle-relevant", "r", "relevant", {"doc": "relevant"}),
        KeyUse("toggle-utilized", "u", "utilized", {"doc": "utilized"}),
        KeyUse("toggle-supported", "s", "supported", {"response": "supported"}),
        KeyUse("edit-support-keys", "l", "keys", {"response": "support_keys"}),
    ),
    item_labels={"doc": ("relevant", "utilized"), "response": ("supported", "support_keys")},
    metrics=("trace.",),
    settings=("trace.variant",),
    reasons=_reasons,
    compute=trace.metrics,
    # (trace.stats; the columns of the metric_stats table (store.metric_stats_writes), in this order)
    stats=(
        *(
            (f"trace.{n}", "INTEGER")
            for n in (
                "sentences",
                "chars",
                "relevant",
                "utilized",
                "both",
                "relevant_listed",
                "utilized_listed",
                "relevant_chars",
                "utilized_chars",
                "both_chars",
            )
        ),
        *(
            (f"trace.{n}", "REAL")
            for n in (
                "adherent",
                "all_supported",
                "stored_relevance",
                "stored_utilization",
                "stored_completeness",
                "stored_adherence",
            )
        ),
    ),
    variants=(Variant("trace.variant", "ragbench", trace.VARIANTS),),
)
