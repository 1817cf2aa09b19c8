"""The judge's reasoning on a DeepEval test case, per (label, target), for the review
screen: each verdict's ``reason`` (from ``verboseLogs``), and at the record level
Faithfulness's truths and each verdict metric's own ``reason``."""

from __future__ import annotations

from typing import Any

from . import deepeval_logs as logs
from .deepeval_items import METRICS, metric_entries
from .record import Record

Reasons = dict[tuple[str, str], str]


def reasons(rec: Record, src: Any) -> Reasons:
    out: Reasons = {}
    block = rec.data.get("deepeval")
    truths = block.get("truths") if isinstance(block, dict) else None
    if isinstance(truths, list) and truths:
        listed = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(truths))
        out[("deepeval_claim", "*")] = f"truths from the retrieval context:\n{listed}"
    cases = src.get("metricsData") if isinstance(src, dict) else None
    if not isinstance(cases, list):
        return out
    for entry in metric_entries(rec.data):
        keys, slug, index = entry.get("keys"), entry.get("slug"), entry.get("index")
        if not isinstance(keys, list) or slug not in METRICS or not isinstance(index, int):
            continue
        metric = cases[index] if index < len(cases) else None
        if not isinstance(metric, dict):
            continue
        label = METRICS[slug][1]
        text = metric.get("verboseLogs")
        verdicts = (
            logs.objects(logs.steps(text).get("Verdicts", "")) if isinstance(text, str) else None
        )
        if verdicts and slug == "contextual_relevancy":
            verdicts = [v for b in verdicts for v in b.get("verdicts", []) if isinstance(v, dict)]
        for key, verdict in zip(keys, verdicts or [], strict=False):
            why = verdict.get("reason") if isinstance(verdict, dict) else None
            if isinstance(why, str) and why.strip():
                out[(label, key)] = why
        why = metric.get("reason")
        if isinstance(why, str) and why.strip():
            prior = out.get((label, "*"))
            head = f"{entry.get('name')} (score {metric.get('score')}): {why}"
            out[(label, "*")] = f"{prior}\n{head}" if prior else head
    return out
