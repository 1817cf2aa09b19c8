"""RAGChecker's eleven metrics, docs/metrics.md, after amazon-science/RAGChecker
``ragchecker/computation.py`` (per result) and ``evaluator.py`` (the aggregates).

The four label arrays are label layers here: ``answer2response`` per response claim
(``s1``…), ``response2answer`` per ground-truth claim (``r1``…), ``retrieved2response``
and ``retrieved2answer`` per claim x chunk (``s1/c0``). Only ``"Entailment"`` counts as
true (``to_bool``); a missing label counts as not entailed, as any other value does.

Edge cases are the reference's: an empty claim list gives 0.0 (not undefined), and so do
the chunk metrics of a result without chunks, except ``claim_recall`` there, which
``evaluate_retrieval`` computes as the mean of an empty array (NaN): undefined here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..keys import cell_key
from ..labels import Layer
from ..record import Record
from .common import Values

LABELS = ("answer2response", "response2answer", "retrieved2response", "retrieved2answer")
# evaluator.py's METRIC_GROUP_MAP: the aggregate groups, in RAGChecker's order
GROUPS: dict[str, tuple[str, ...]] = {
    "overall": ("precision", "recall", "f1"),
    "retriever": ("claim_recall", "context_precision"),
    "generator": (
        "context_utilization",
        "noise_sensitivity_in_relevant",
        "noise_sensitivity_in_irrelevant",
        "hallucination",
        "self_knowledge",
        "faithfulness",
    ),
}
METRICS = tuple(m for names in GROUPS.values() for m in names)
PREFIX = "ragchecker."
ENTAILED = "Entailment"


def _mean(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags)


def _row(labels: Layer, name: str, keys: Sequence[str]) -> list[bool]:
    given = labels.get(name) or {}
    return [given.get(k) == ENTAILED for k in keys]


def _matrix(labels: Layer, name: str, keys: Sequence[str], chunks: int) -> list[list[bool]]:
    given = labels.get(name) or {}
    return [[given.get(cell_key(k, c)) == ENTAILED for c in range(chunks)] for k in keys]


def values(record: Record, labels: Layer) -> dict[str, float | None]:
    """The eleven per-result metrics (computation.py's ``evaluate_*``), by bare name."""
    response = [k for k, _ in record.statements]
    answer = [k for k, _ in record.reference_statements]
    chunks = len(record.documents)
    a2r = _row(labels, "answer2response", response)
    r2a = _row(labels, "response2answer", answer)
    ret2resp = _matrix(labels, "retrieved2response", response, chunks)
    ret2ans = _matrix(labels, "retrieved2answer", answer, chunks)
    out: dict[str, float | None] = {}
    precision = _mean(a2r) if a2r else 0.0
    recall = _mean(r2a) if r2a else 0.0
    out["precision"], out["recall"] = precision, recall
    out["f1"] = (
        2 * precision * recall / (precision + recall) if precision > 0 and recall > 0 else 0.0
    )
    # evaluate_retrieval: claims recalled by some chunk, chunks entailing some claim
    recalled = [any(row) for row in ret2ans]
    if answer and chunks:
        out["claim_recall"] = _mean(recalled)
        out["context_precision"] = _mean([any(row[c] for row in ret2ans) for c in range(chunks)])
    elif answer:  # (no chunks) np.mean of an empty array: NaN
        out["claim_recall"], out["context_precision"] = None, 0.0
    else:
        out["claim_recall"], out["context_precision"] = 0.0, 0.0
    # evaluate_context_utilization
    used = sum(1 for hit, entailed in zip(recalled, r2a, strict=True) if hit and entailed)
    out["context_utilization"] = used / sum(recalled) if chunks and any(recalled) else 0.0
    # evaluate_noise_sensitivity: chunks that entail some ground-truth claim are relevant
    if response and chunks and answer:
        relevant = [any(row[c] for row in ret2ans) for c in range(chunks)]
        in_relevant = [any(r and e for r, e in zip(relevant, row)) for row in ret2resp]
        in_irrelevant = [
            any(not r and e for r, e in zip(relevant, row)) and not rel
            for row, rel in zip(ret2resp, in_relevant)
        ]
        wrong = [not ok for ok in a2r]
        out["noise_sensitivity_in_relevant"] = _mean([f and w for f, w in zip(in_relevant, wrong)])
        out["noise_sensitivity_in_irrelevant"] = _mean(
            [f and w for f, w in zip(in_irrelevant, wrong)]
        )
    else:
        out["noise_sensitivity_in_relevant"] = out["noise_sensitivity_in_irrelevant"] = 0.0
    # evaluate_unfaithfulness and evaluate_faithfulness
    if response and chunks:
        faithful = [any(row) for row in ret2resp]
        out["hallucination"] = _mean([not f and not ok for f, ok in zip(faithful, a2r)])
        out["self_knowledge"] = _mean([not f and ok for f, ok in zip(faithful, a2r)])
        out["faithfulness"] = _mean(faithful)
    else:
        out["hallucination"] = out["self_knowledge"] = out["faithfulness"] = 0.0
    return {m: out[m] for m in METRICS}


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
    return {PREFIX + name: value for name, value in values(record, labels).items()}


# -- the aggregates (evaluator.py) ----------------------------------------------------


def numpy_sum(xs: Sequence[float]) -> float:
    """``np.add.reduce`` of a float64 array, in numpy's order (its pairwise summation:
    blocks of up to 128 summed with 8 accumulators), so a mean comes out to the last
    bit as RAGChecker's ``np.mean`` does (checked against numpy in the tests)."""
    return _pairwise(xs, 0, len(xs)) if xs else 0.0


def _pairwise(xs: Sequence[float], start: int, n: int) -> float:
    if n < 8:
        total = -0.0  # (numpy's start: keeps a sum of -0.0 values -0.0)
        for i in range(start, start + n):
            total += xs[i]
        return total
    if n <= 128:
        r = [xs[start + j] for j in range(8)]
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += xs[start + i + j]
            i += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for k in range(i, n):
            total += xs[start + k]
        return total
    half = n // 2
    half -= half % 8
    return _pairwise(xs, start, half) + _pairwise(xs, start + half, n - half)


def aggregate(per_result: Sequence[float]) -> float | None:
    """evaluator.py: ``round(np.mean(values) * 100, 1)``, numpy's rounding (scale by 10,
    round half to even, scale back); None over no results (numpy: NaN)."""
    if not per_result:
        return None
    scaled = numpy_sum(per_result) / len(per_result) * 100
    return round(scaled * 10) / 10


def aggregates(rows: Sequence[Mapping[str, float | None]]) -> dict[str, dict[str, float | None]]:
    """The file's ``metrics`` object, by group, from every result's per-result values
    (bare names). A metric undefined on a result (NaN in RAGChecker) makes its
    aggregate undefined, as NaN does in ``np.mean``."""
    out: dict[str, dict[str, float | None]] = {}
    for group, names in GROUPS.items():
        out[group] = {}
        for name in names:
            got = [row.get(name) for row in rows]
            clean = [v for v in got if v is not None]
            out[group][name] = aggregate(clean) if len(clean) == len(got) else None
    return out
