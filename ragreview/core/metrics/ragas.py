"""ragas per-record metrics, docs/metrics.md, after explodinggradients/ragas.

Denominators are the record's own items (statements, reference statements, contexts),
never the number of verdicts a judge returned: an item without a verdict counts as
not supported / not attributed / not useful.

A sample of ragas' human-annotation export (``MetricAnnotation``, a record carrying
``ragas_metric``) is one metric's pass/fail verdict, e.g. an aspect critic such as
``helpfulness``: its score is ``ragas.verdict``, the ``verdict`` label as 1.0 / 0.0
(``AspectCritic._compute_score`` returns the verdict itself, the majority verdict when
several were drawn), None when the sample has none. The other ragas metrics do not
apply to such a sample.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..keys import context_key
from ..labels import Layer
from ..record import Record
from .common import Values

LABELS = ("statement", "attributed", "context_useful", "verdict")


def faithfulness(record: Record, labels: Layer) -> float | None:
    """True statements / statements on the record; None (ragas: NaN) if none."""
    if not record.statements:
        return None
    verdicts = labels.get("statement") or {}
    return sum(verdicts.get(k) is True for k, _ in record.statements) / len(record.statements)


def context_recall(record: Record, labels: Layer) -> float | None:
    if not record.reference_statements:
        return None
    verdicts = labels.get("attributed") or {}
    attributed = sum(verdicts.get(k) is True for k, _ in record.reference_statements)
    return attributed / len(record.reference_statements)


def average_precision(verdicts: list[int]) -> float:
    """ragas context_precision: Σ precision@i · v_i / (Σ v + 1e-10); 0.0 if none useful."""
    total = 0.0
    hits = 0
    for i, v in enumerate(verdicts):
        hits += v
        total += (hits / (i + 1)) * v
    return total / (sum(verdicts) + 1e-10)


def context_precision(record: Record, labels: Layer) -> float:
    useful = labels.get("context_useful") or {}
    return average_precision(
        [1 if useful.get(context_key(i)) is True else 0 for i in range(len(record.documents))]
    )


def context_relevancy(record: Record, labels: Layer) -> float | None:
    """Legacy ragas (<= v0.1.10): min(1, extracted sentences / context sentences), 0 when
    the contexts have no sentence. The extracted sentences are the ``relevant`` ones;
    without relevance labels the source's imported value is used."""
    if labels.get("relevant"):
        total = len(record.doc_sentences)
        keys = [k for k, _ in record.doc_sentences]
        extracted = sum(labels["relevant"].get(k) is True for k in keys)
        return 0.0 if total == 0 else min(extracted / total, 1.0)
    return record.scores.get("ragas.context_relevancy")


def verdict(labels: Layer) -> float | None:
    """The sample's pass/fail verdict as its score (ragas AspectCritic: the verdict)."""
    value = (labels.get("verdict") or {}).get("*")
    return None if value is None else (1.0 if value is True or value == 1 else 0.0)


def is_annotation(record: Record) -> bool:
    return record.data.get("ragas_metric") is not None


def metrics(
    record: Record,
    labels: Layer,
    settings: Mapping[str, Any],
    *,
    judge: Layer | None = None,
    into: dict[str, Any] | None = None,
) -> Values:
    """The family's per-record values (``common.MetricFunction``; no setting-dependent
    stats here, so ``judge`` and ``into`` go unread)."""
    if is_annotation(record) or labels.get("verdict"):
        return {"ragas.verdict": verdict(labels)}
    out: Values = {
        "ragas.faithfulness": faithfulness(record, labels),
        "ragas.context_recall": context_recall(record, labels),
    }
    if labels.get("context_useful") or (record.task == "ragas" and record.documents):
        # a sample without retrieved contexts was not scored for context precision
        out["ragas.context_precision"] = context_precision(record, labels)
    if record.task == "ragas" or "ragas.context_relevancy" in record.scores:
        out["ragas.context_relevancy"] = context_relevancy(record, labels)
    return out
