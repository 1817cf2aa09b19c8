"""TRACe (RAGBench) per-record metrics, docs/metrics.md, three variants.

``ragbench`` (default) reproduces the scores shipped in the RAGBench dataset: sentence
counts, not lengths. RAGBench counted the *raw* label lists, duplicates and stray
entries included (``"0a"`` twice, ``"0a"`` + ``"0a."``, keys that name no sentence);
our labels are a set of valid keys, so the RAGBench importer keeps the raw list lengths
as ``scores["ragbench.relevant_listed"]`` / ``["ragbench.utilized_listed"]``. The
entries beyond the judge's distinct keys (listed − |R_judge|) still count, as in
RAGBench; a reviewer's additions and removals move |R| from there. That needs the
imported judge layer, passed as ``judge`` (also when ``labels`` is that layer itself);
without it only the labelled keys count, which is the clean value and never pins a
reviewed layer to the judge's raw count. The lengths describe the imported labels
only: where another judge run gave the record's TRACe labels, callers pass no ``judge``
(``store.metric_writes.trace_from_runs``).

``length`` is the paper's definition (weights are sentence lengths in characters);
``capped20`` the "GPT labeling" dashboard description.

Components prefixed ``trace._`` feed dataset aggregates (RMSE against the source's
stored scores and hallucination AUROC as in RAGBench's calculate_metrics.py).
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any

from ..labels import Layer
from ..record import Record
from .common import Values, setting

LABELS = ("relevant", "utilized", "supported", "support_keys")
VARIANTS = ("ragbench", "length", "capped20")
STORED = {
    "trace.relevance": "stored.relevance_score",
    "trace.utilization": "stored.utilization_score",
    "trace.completeness": "stored.completeness_score",
}
# the stored scores the components compare with, as stats names (stored_relevance, …)
STORED_STATS = {f"trace.stored_{n[6:]}": s for n, s in STORED.items()}


def _adherence(record: Record, labels: Layer) -> tuple[float, float]:
    """(adherent, all supported): 1.0 unless a response sentence is unsupported, and
    1.0 when every one is positively supported (capped20's stricter reading).

    RAGBench derives adherence from ``unsupported_response_sentence_keys``: a sentence
    without a verdict is not unsupported.
    """
    supported = labels.get("supported") or {}
    verdicts = [supported.get(k) for k, _ in record.response]
    adherent = 0.0 if any(v is False for v in verdicts) else 1.0
    return adherent, 1.0 if all(v is True for v in verdicts) else 0.0


def _true(labels: Layer, name: str, keys: Container[str]) -> set[str]:
    """The record's sentences whose ``name`` label is true (labels on other keys ignored)."""
    return {k for k, v in (labels.get(name) or {}).items() if v is True and k in keys}


def _extra(record: Record, listed: str, judged: set[str]) -> int:
    """Listed keys beyond the judge's true labels (unknown or repeated keys in the row)."""
    count = record.scores.get(listed)
    if count is None:
        return 0
    return max(0, int(count) - len(judged))


def stats(record: Record, labels: Layer, judge: Layer | None = None) -> Values:
    """The layer's sufficient statistics: every variant's values follow from these
    (``values``), so a variant change needs no pass over the records. Sentence counts
    and character lengths of the relevant (R), utilized (U) and both (R∩U) sets; R and
    U counted as RAGBench listed them (``*_listed``, see the module docstring); the
    adherence verdicts; and the source's stored scores the components compare with."""
    sentences = record.doc_sentences
    size = {k: len(text) for k, text in sentences}  # (also the set of the record's keys)
    relevant = _true(labels, "relevant", size)
    utilized = _true(labels, "utilized", size)
    both = relevant & utilized
    n_r, n_u = len(relevant), len(utilized)
    if judge is not None:  # (on import the labels are the judge's: no second pass)
        judged_r = relevant if judge is labels else _true(judge, "relevant", size)
        judged_u = utilized if judge is labels else _true(judge, "utilized", size)
        n_r += _extra(record, "ragbench.relevant_listed", judged_r)
        n_u += _extra(record, "ragbench.utilized_listed", judged_u)
    stored = {name: record.scores.get(key) for name, key in STORED_STATS.items()}
    stored["trace.stored_adherence"] = record.scores.get("stored.adherence_score")
    adherent, all_supported = _adherence(record, labels)
    return {
        "trace.sentences": len(sentences),
        "trace.chars": sum(size.values()),
        "trace.relevant": len(relevant),
        "trace.utilized": len(utilized),
        "trace.both": len(both),
        "trace.relevant_listed": n_r,
        "trace.utilized_listed": n_u,
        "trace.relevant_chars": sum(map(size.__getitem__, relevant)),
        "trace.utilized_chars": sum(map(size.__getitem__, utilized)),
        "trace.both_chars": sum(map(size.__getitem__, both)),
        "trace.adherent": adherent,
        "trace.all_supported": all_supported,
        **{name: None if v is None else float(v) for name, v in stored.items()},
    }


def values(s: Mapping[str, Any], variant: str) -> Values:
    """A variant's per-record values from ``stats`` (``store.metric_stats_writes`` repeats
    these formulas in SQL, tested equal)."""
    out: Values = {}
    if variant == "ragbench":
        total, n_r = s["trace.sentences"], s["trace.relevant_listed"]
        out["trace.relevance"] = n_r / total if total else 0.0
        out["trace.utilization"] = s["trace.utilized_listed"] / total if total else 0.0
        out["trace.completeness"] = s["trace.both"] / n_r if n_r else 1.0
        out["trace.adherence"] = s["trace.adherent"]
    elif variant == "length":
        total, r_len = s["trace.chars"], s["trace.relevant_chars"]
        out["trace.relevance"] = r_len / total if total else 0.0
        out["trace.utilization"] = s["trace.utilized_chars"] / total if total else 0.0
        out["trace.completeness"] = s["trace.both_chars"] / r_len if r_len else 1.0
        out["trace.adherence"] = s["trace.adherent"]
    else:  # capped20
        n_r, n_u = s["trace.relevant"], s["trace.utilized"]
        out["trace.relevance"] = min(1.0, n_r / 20)
        out["trace.utilization"] = min(1.0, n_u / n_r) if n_r else 0.0
        if n_r:
            out["trace.completeness"] = s["trace.both"] / n_r
        else:
            out["trace.completeness"] = 1.0 if not n_u else 0.0
        out["trace.adherence"] = s["trace.all_supported"]
    out.update(_components(s, out))
    return out


def metrics(
    record: Record,
    labels: Layer,
    settings: Mapping[str, Any],
    *,
    judge: Layer | None = None,
    into: dict[str, Any] | None = None,
) -> Values:
    """The variant's values; ``into`` (when given) also receives the layer's ``stats``."""
    variant = setting(settings, "trace.variant", "ragbench")
    if variant not in VARIANTS:
        raise ValueError(f"unknown trace.variant {variant!r}")
    s = stats(record, labels, judge)
    if into is not None:
        into.update(s)
    return values(s, variant)


def _components(s: Mapping[str, Any], values: Values) -> Values:
    """Per-record terms of RMSE and AUROC against the source's stored judge scores.

    The squared error is ``d * d``, as numpy squares in RAGBench's calculate_metrics.py
    (sklearn's mean_squared_error), and as SQL can repeat it exactly."""
    out: Values = {}
    for name in STORED:
        stored = s[f"trace.stored_{name[6:]}"]
        ours = values[name]
        if stored is not None and ours is not None:
            diff = stored - ours
            out[name.replace("trace.", "trace._sqerr_")] = diff * diff
    stored_adherence = s["trace.stored_adherence"]
    if stored_adherence is not None and values["trace.adherence"] is not None:
        truth = 1.0 - values["trace.adherence"]  # hallucination
        pred = 1.0 - stored_adherence
        out["trace._hall"] = truth
        out["trace._hall_pred"] = pred
        out["trace._hall_tp"] = truth * pred
    return out
