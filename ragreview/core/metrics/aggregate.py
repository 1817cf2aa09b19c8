"""Dataset-level values from running sums, and stored-score mapping.

Every per-record value (public or component) is kept per (dataset, layer, name) as
``(n, Σv, Σv², undefined)``: n, Σv and Σv² over the records where it is defined, and
how many records carry it undefined (None). That is enough for:

* a per-record metric's dataset value: its mean over the records where it is defined,
  under the same name (docs/architecture.md); None when it is defined on none of them;
* how many records it is undefined on (counted, never averaged as 0);
* the long-form family's population standard deviation (SAFE's ``np.std``), as
  ``<name>_std``;
* RGB's rates (``rgb.accuracy``, ``rgb.rejection_rate``, ``rgb.error_detection_rate``,
  ``rgb.error_correction_rate`` per evalue.py, and the judge scripts' own
  ``rgb.reject_evalue.*`` and ``rgb.fact_evalue.*`` rates, core/metrics/rgb.py),
  which are ratios of counts;
* TRACe's RMSE against the source's stored scores and hallucination AUROC;

so one label change adjusts the sums by the old and new values of one record, with no
rescan of the others.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from ..deepeval_items import metric_entries
from ..record import Record
from .common import Values
from .ragchecker import GROUPS as RAGCHECKER_GROUPS

# name -> (count, sum, sum of squares, records where undefined)
Sums = tuple[int, float, float, int]
Totals = dict[str, Sums]
_NONE: Sums = (0, 0.0, 0.0, 0)


def add_values(totals: Totals, values: Mapping[str, float | None], sign: int = 1) -> None:
    """Add (sign=1) or remove (sign=-1) one record's values from running sums."""
    for name, value in values.items():
        n, s, ss, undefined = totals.get(name, _NONE)
        if value is None:
            totals[name] = (n, s, ss, undefined + sign)
        else:
            totals[name] = (n + sign, s + sign * value, ss + sign * value * value, undefined)


def _present(totals: Mapping[str, Sums], name: str) -> bool:
    """Some record carries the value, defined or not (a row left at zero is not)."""
    n, _, _, undefined = totals.get(name, _NONE)
    return n > 0 or undefined > 0


def _mean(totals: Mapping[str, Sums], name: str) -> float | None:
    n, s, _, _ = totals.get(name, _NONE)
    return s / n if n > 0 else None


def _sum(totals: Mapping[str, Sums], name: str) -> float:
    return totals.get(name, _NONE)[1]


def _std(totals: Mapping[str, Sums], name: str) -> float | None:
    n, s, ss, _ = totals.get(name, _NONE)
    if n <= 0:
        return None
    mean = s / n
    return math.sqrt(max(0.0, ss / n - mean * mean))


def undefined_counts(totals: Mapping[str, Sums]) -> dict[str, int]:
    """Per public metric, how many records have it undefined (only those with any)."""
    return {
        name: sums[3] for name, sums in sorted(totals.items()) if "._" not in name and sums[3] > 0
    }


def dataset_values(totals: Mapping[str, Sums], settings: Mapping[str, Any] | None = None) -> Values:
    """Dataset-level values of one layer from its running sums."""
    settings = settings or {}
    out: Values = {}
    for name in sorted(totals):
        if not _present(totals, name):
            continue
        if "._" not in name:
            out[name] = _mean(totals, name)
            if name.startswith("longform."):
                out[name + "_std"] = _std(totals, name)
    # RGB (docs/metrics.md): accuracy over the non-negative records, rejection over noise
    # rate 1, detection and correction over the counterfactual records; each None when
    # no record it runs over has anything to score.
    if _present(totals, "rgb._accuracy"):
        out["rgb.accuracy"] = _mean(totals, "rgb._accuracy")
    if _present(totals, "rgb._rejection"):
        out["rgb.rejection_rate"] = _mean(totals, "rgb._rejection")
    if _present(totals, "rgb._reject_evalue"):
        # reject_evalue.py over its records: reject_rate = #"not addressed" / n (the
        # judge's verdict alone), all_rate = #(0 not in label and 1 in label) / n
        out["rgb.reject_evalue.rejection_rate"] = _mean(totals, "rgb._reject_evalue")
        out["rgb.reject_evalue.accuracy"] = _mean(totals, "rgb._reject_evalue_correct")
    if _present(totals, "rgb._fact_identified"):
        # fact_evalue.py over its records: reject_rate = #identified / n, all_rate as
        # above, correct_rate = correct_tt / rejecttt (0 when nothing was identified)
        identified = _sum(totals, "rgb._fact_identified")
        out["rgb.fact_evalue.error_detection_rate"] = _mean(totals, "rgb._fact_identified")
        out["rgb.fact_evalue.accuracy"] = _mean(totals, "rgb._fact_correct")
        out["rgb.fact_evalue.error_correction_rate"] = (
            _sum(totals, "rgb._fact_corrected") / identified if identified else 0.0
        )
    if _present(totals, "rgb._detected"):
        out["rgb.error_detection_rate"] = _mean(totals, "rgb._detected")
        detected = _sum(totals, "rgb._detected")
        scored = totals["rgb._detected"][0] > 0
        if settings.get("rgb.variant", "reference") == "reference":
            # evalue.py: correct_tt / fact_tt, 0 when nothing was detected.
            out["rgb.error_correction_rate"] = (
                (_sum(totals, "rgb._corrected") / detected if detected else 0.0) if scored else None
            )
        else:
            out["rgb.error_correction_rate"] = _mean(totals, "rgb._corrected")
    # RAGChecker's aggregates (evaluator.py): the mean x 100 rounded to one decimal, under
    # the group it writes them in (ragchecker.overall.precision = 76.4)
    for group, names in RAGCHECKER_GROUPS.items():
        for name in names:
            key = f"ragchecker.{name}"
            mean, nan = _mean(totals, key), totals.get(key, _NONE)[3] > 0
            if _present(totals, key):  # (one NaN result makes np.mean NaN)
                out[f"ragchecker.{group}.{name}"] = (
                    None if mean is None or nan else round(mean * 100 * 10) / 10
                )
    # TRACe against the source's stored judge scores (RAGBench calculate_metrics.py).
    for metric in ("relevance", "utilization", "completeness"):
        mse = _mean(totals, f"trace._sqerr_{metric}")
        if mse is not None:
            out[f"trace.{metric}_rmse"] = math.sqrt(mse)
    n = totals.get("trace._hall", _NONE)[0]
    if n > 0:
        positives = _sum(totals, "trace._hall")
        negatives = n - positives
        tp = _sum(totals, "trace._hall_tp")
        fp = _sum(totals, "trace._hall_pred") - tp
        # AUROC of a 0/1 predictor (ties count half): (1 + TPR - FPR) / 2; sklearn's
        # roc_auc_score is undefined with a single class.
        if positives > 0.5 and negatives > 0.5:
            out["trace.hallucination_auroc"] = 0.5 * (1 + tp / positives - fp / negatives)
        else:
            out["trace.hallucination_auroc"] = None
    return out


def totals_of(rows: Iterable[Mapping[str, float | None]]) -> Totals:
    totals: Totals = {}
    for values in rows:
        add_values(totals, values)
    return totals


# -- the source's own stored scores -> our canonical names ----------------------------

_STORED_ALIASES: dict[str, tuple[str, ...]] = {
    "trace.relevance": ("relevance_score",),
    "trace.utilization": ("utilization_score",),
    "trace.completeness": ("completeness_score",),
    "trace.adherence": ("adherence_score",),
    "mtrag.recall": ("recall",),
    "mtrag.rouge_l": ("rougel_stemfalse", "rougel", "rouge_l"),
    "mtrag.extractiveness": ("extractiveness_rougel", "extractiveness"),
    "mtrag.length": ("length",),
    "mtrag.rb_agg": ("rb_agg",),
    "mtrag.rb_llm": ("rb_llm",),
    "mtrag.rl_f": ("rl_f",),
    "mtrag.rb_agg_idk": ("rb_agg_idk_underspecified", "rb_agg_idk"),
    "mtrag.rb_llm_idk": ("rb_llm_idk_underspecified", "rb_llm_idk"),
    "mtrag.rl_f_idk": ("rl_f_idk_underspecified", "rl_f_idk"),
    "longform.supported": ("supported",),
    "longform.not_supported": ("not_supported",),
    "longform.irrelevant": ("irrelevant",),
    "ragas.faithfulness": ("faithfulness",),
    "ragas.context_recall": ("context_recall",),
    "ragas.context_precision": ("context_precision",),
    "ragas.context_relevancy": ("context_relevancy",),
    # RAGChecker's per-result metrics, stored by the adapter under these names
    **{f"ragchecker.{m}": (f"ragchecker.{m}",) for ms in RAGCHECKER_GROUPS.values() for m in ms},
}


# alias -> (its canonical name's place in _STORED_ALIASES, the alias's rank there)
_ALIAS_AT = {
    alias: (place, rank)
    for place, aliases in enumerate(_STORED_ALIASES.values())
    for rank, alias in enumerate(aliases)
}
_CANONICAL = list(_STORED_ALIASES)


@lru_cache(maxsize=1024)  # a handful of score names, on every record of an import
def _norm(name: str) -> str:
    return name.lower().replace(" ", "_").replace("-", "_")


@lru_cache(maxsize=256)  # one or two sets of score names per file, on every record
def _stored_names(names: tuple[str, ...]) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """For a record's score names (in order): the (canonical name, score name) pairs
    of ``stored_pairs``, in its order, and the score names of its stored F1 scores."""
    # normalised alias -> the last score name that normalises to it (a later one wins,
    # as it would in a dict of the values)
    by_norm = {_norm(k[len("stored.") :]): k for k in names if k.startswith("stored.")}
    # for each canonical name its first alias the record has: the same as trying every
    # alias in turn, without the ~30 look-ups per record
    best: dict[int, tuple[int, str]] = {}
    for alias in by_norm:
        at = _ALIAS_AT.get(alias)
        if at is not None and (at[0] not in best or at[1] < best[at[0]][0]):
            best[at[0]] = (at[1], alias)
    pairs = tuple((_CANONICAL[place], by_norm[best[place][1]]) for place in sorted(best))
    return pairs, tuple(k for alias, k in by_norm.items() if alias.startswith("f1_"))


def stored_pairs(record: Record, settings: Mapping[str, Any] | None = None) -> Values:
    """The record's ``stored.*`` scores under the canonical names they correspond to.

    ``stored.f1_<K>`` maps to ``longform.f1_at_k`` when K is the K in force (SAFE writes
    ``f1_-1`` for its default K = 100).
    """
    settings = settings or {}
    scores = record.scores
    pairs, f1_keys = _stored_names(tuple(scores))
    out: Values = {name: scores[key] for name, key in pairs}
    # ragas' annotation export keeps each sample's score as its metric's own name
    metric = record.data.get("ragas_metric")
    if isinstance(metric, str) and f"stored.{metric}" in scores:
        out["ragas.verdict"] = scores[f"stored.{metric}"]
    # DeepEval: the score of each metric recomputed from its verdicts (one without
    # verdicts is its stored score, nothing to compare)
    for entry in metric_entries(record.data):
        if isinstance(entry.get("keys"), list) and entry.get("score") is not None:
            out[f"deepeval.{entry['slug']}"] = entry["score"]
    if f1_keys:  # (most records have no stored F1: nothing to pick from)
        k = int(settings.get("longform.k") or 100)
        f1 = stored_f1_at_k(_f1_scores(scores, f1_keys), k)
        if f1 is not ABSENT:
            out["longform.f1_at_k"] = f1
    return out


ABSENT: Any = object()  # no stored score, as opposed to a stored null


def stored_f1(record: Record) -> dict[str, Any]:
    """The record's stored F1 scores at any K (``f1_64``, ``f1_at_k``, SAFE's ``f1__1``
    for its default K), by normalised name: what ``stored_f1_at_k`` picks from."""
    scores = record.scores
    return _f1_scores(scores, _stored_names(tuple(scores))[1])


def _f1_scores(scores: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """``stored_f1`` from the F1 score names ``_stored_names`` found."""
    return {_norm(key[len("stored.") :]): scores[key] for key in keys}


def stored_f1_at_k(f1: Mapping[str, Any], k: int) -> Any:
    """The stored F1 that ``longform.f1_at_k`` compares with at this K, else ``ABSENT``:
    ``f1_<K>``, else ``f1_at_k``, else SAFE's ``f1_-1`` when K is its default 100
    (``store.metric_stats_writes`` repeats this in SQL)."""
    for alias in (f"f1_{k}", "f1_at_k") + (("f1__1",) if k == 100 else ()):
        if alias in f1:
            return f1[alias]
    return ABSENT
