"""DeepEval's five verdict metrics, docs/metrics.md, after confident-ai/deepeval's
``_calculate_score`` of each metric (deepeval 4.3, ``metrics/*/…py`` and
``metrics/utils/qag.py: score_qag_verdicts``).

A test case carries each metric's threshold, strictMode and stored score
(``record.data["deepeval"]["metrics"]``, see ``core.deepeval_items``); the verdicts are
the labels. Per metric, over its items in the file's order:

- Faithfulness: verdicts that are not ``no``, less the ``idk`` ones when
  ``deepeval.penalize_ambiguous_claims`` (not in the file; DeepEval's default False),
  over all verdicts; 1 when there are none.
- Answer Relevancy: verdicts that are not ``no`` over all; 1 when none.
- Contextual Relevancy: ``yes`` statements over all statements of all nodes; 0 when none.
- Contextual Precision: Σ_k precision@k · rel_k / relevant nodes; 0 when none relevant.
- Contextual Recall: ``yes`` over all; 0 when none.

strictMode: a score below the threshold becomes 0. A metric that holds an ``error``
or no score is undefined (None), whatever its labels. A metric without verdicts (GEval,
custom metrics) keeps its stored score under ``deepeval.<its name>``, the same in
every layer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..deepeval_items import METRICS, PENALIZE, metric_entries
from ..labels import Layer
from ..record import Record
from .common import Values

LABELS = tuple(label for _, label, _ in METRICS.values())


def faithfulness(verdicts: Sequence[Any], penalize: bool) -> float:
    if not verdicts:
        return 1.0
    passed = sum(v != "no" for v in verdicts) - (
        sum(v == "idk" for v in verdicts) if penalize else 0
    )
    return passed / len(verdicts)


def answer_relevancy(verdicts: Sequence[Any]) -> float:
    if not verdicts:
        return 1.0
    return sum(v != "no" for v in verdicts) / len(verdicts)


def share_yes(verdicts: Sequence[Any]) -> float:
    """Contextual Relevancy and Contextual Recall: yes / all, 0 when none."""
    if not verdicts:
        return 0.0
    return sum(v == "yes" for v in verdicts) / len(verdicts)


def contextual_precision(verdicts: Sequence[Any]) -> float:
    total, relevant = 0.0, 0
    for k, v in enumerate(verdicts, start=1):
        if v == "yes":
            relevant += 1
            total += relevant / k
    return 0.0 if relevant == 0 else total / relevant


def score(slug: str, verdicts: Sequence[Any], penalize: bool) -> float:
    if slug == "faithfulness":
        return faithfulness(verdicts, penalize)
    if slug == "answer_relevancy":
        return answer_relevancy(verdicts)
    if slug == "contextual_precision":
        return contextual_precision(verdicts)
    return share_yes(verdicts)


def strict(value: float, entry: Mapping[str, Any]) -> float:
    threshold = entry.get("threshold")
    if entry.get("strict") and isinstance(threshold, (int, float)) and value < threshold:
        return 0.0  # (DeepEval's int 0, a float in its MetricData)
    return value


def metric_value(
    entry: Mapping[str, Any], labels: Layer, settings: Mapping[str, Any]
) -> float | None:
    """One metric's value from the layer (stored score for a metric without verdicts)."""
    if entry.get("error") or entry.get("score") is None:
        return None
    slug = entry.get("slug")
    keys = entry.get("keys")
    if slug not in METRICS or not isinstance(keys, list):
        return entry["score"]
    label = METRICS[slug][1]
    given = labels.get(label) or {}
    verdicts = [given.get(k) for k in keys]
    return strict(score(slug, verdicts, bool(settings.get(PENALIZE))), entry)


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
    out: Values = {}
    for entry in metric_entries(record.data):
        slug = entry.get("slug")
        if isinstance(slug, str):
            out[f"deepeval.{slug}"] = metric_value(entry, labels, settings)
    return out
