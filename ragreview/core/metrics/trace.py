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
    verdict = (labels.get("supported") or {}).get
    adherent = all_supported = 1.0
    for key, _ in record.response:  # (one loop: this runs for every record an import reads)
        value = verdict(key)
        if value is not True:
            all_supported = 0.0
            if value is False:
                adherent = 0.0
    return adherent, all_supported


def _true(labels: Layer, name: str, keys: Container[str]) -> set[str]:
    """The record's sentences whose ``name`` label is true (labels on other keys ignored)."""
    return {k for k, v in (labels.get(name) or {}).items() if v is True and k in keys}


def _extra(record: Record, listed: str, judged: set[str]) -> int:
    """Listed keys beyond the judge's true labels (unknown or repeated keys in the row)."""
    count = record.scores.get(listed)
    if count is None:
        return 0
    return max(0, int(count) - len(judged))


# (stats name, the score it reads) of the stored scores, in ``stats``' order
_STORED_READ = (*STORED_STATS.items(), ("trace.stored_adherence", "stored.adherence_score"))


def stats(record: Record, labels: Layer, judge: Layer | None = None) -> Values:
    """The layer's sufficient statistics: every variant's values follow from these
    (``values``), so a variant change needs no pass over the records. Sentence counts
    and character lengths of the relevant (R), utilized (U) and both (R∩U) sets; R and
    U counted as RAGBench listed them (``*_listed``, see the module docstring); the
    adherence verdicts; and the source's stored scores the components compare with."""
    # each document sentence's text by key (a repeated key: its last sentence): kept on
    # the record, where a reader may have built it already (building it was half of
    # this function, issue 27)
    text = record.sentence_text
    sentences = 0
    for doc in record.documents:
        sentences += len(doc.sentences)
    relevant = _true(labels, "relevant", text)
    utilized = _true(labels, "utilized", text)
    both = relevant & utilized
    n_r, n_u = len(relevant), len(utilized)
    if judge is not None:  # (on import the labels are the judge's: no second pass)
        judged_r = relevant if judge is labels else _true(judge, "relevant", text)
        judged_u = utilized if judge is labels else _true(judge, "utilized", text)
        n_r += _extra(record, "ragbench.relevant_listed", judged_r)
        n_u += _extra(record, "ragbench.utilized_listed", judged_u)
    adherent, all_supported = _adherence(record, labels)
    length = text.__getitem__
    out: Values = {
        "trace.sentences": sentences,
        "trace.chars": record.sentence_chars,
        "trace.relevant": len(relevant),
        "trace.utilized": len(utilized),
        "trace.both": len(both),
        "trace.relevant_listed": n_r,
        "trace.utilized_listed": n_u,
        "trace.relevant_chars": sum(map(len, map(length, relevant))),
        "trace.utilized_chars": sum(map(len, map(length, utilized))),
        "trace.both_chars": sum(map(len, map(length, both))),
        "trace.adherent": adherent,
        "trace.all_supported": all_supported,
    }
    scores = record.scores
    for name, key in _STORED_READ:
        value = scores.get(key)
        out[name] = None if value is None else float(value)
    return out


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
    _components(s, out)
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


# (value, stored stats name, squared error name) of the RMSE components
_SQERR = tuple((n, f"trace.stored_{n[6:]}", n.replace("trace.", "trace._sqerr_")) for n in STORED)


def _components(s: Mapping[str, Any], values: Values) -> None:
    """Per-record terms of RMSE and AUROC against the source's stored judge scores, added
    to ``values``.

    The squared error is ``d * d``, as numpy squares in RAGBench's calculate_metrics.py
    (sklearn's mean_squared_error), and as SQL can repeat it exactly."""
    for name, stored_name, sqerr in _SQERR:
        stored = s[stored_name]
        ours = values[name]
        if stored is not None and ours is not None:
            diff = stored - ours
            values[sqerr] = diff * diff
    stored_adherence = s["trace.stored_adherence"]
    if stored_adherence is not None and values["trace.adherence"] is not None:
        truth = 1.0 - values["trace.adherence"]  # hallucination
        pred = 1.0 - stored_adherence
        values["trace._hall"] = truth
        values["trace._hall_pred"] = pred
        values["trace._hall_tp"] = truth * pred
