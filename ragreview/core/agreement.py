"""Agreement statistics (docs/agreement.md): judge vs human and human vs human.

Pure functions over plain values, standard library only except the bootstrap, which
draws its resamples with numpy, and Spearman's ranks, which numpy sorts (imported when
first needed; the pure-Python draw and sort were most of the time of ``agreement`` on
thousands of records; the ranks are the same floats). The judge is always the *prediction*
and the human the *truth*, so "precision" is the share of the judge's positives the
human kept, and "recall" (= TPR) the share of the human's positives the judge found.
Every statistic returns ``None`` where it is undefined (a zero denominator) rather
than a made-up 0 or 1.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter, mul, sub
from typing import Any

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0

_first, _second = itemgetter(0), itemgetter(1)


@dataclass(frozen=True)
class Confusion:
    """Binary confusion counts with the judge as prediction, the human as truth."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    def as_json(self) -> dict[str, int]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn}


def confusion(pairs: Sequence[tuple[bool, bool]]) -> Confusion:
    """Count ``(judge, human)`` boolean pairs."""
    return confusion_of_counts(Counter((bool(j), bool(h)) for j, h in pairs))


def confusion_of_counts(counts: Mapping[tuple[Any, Any], int]) -> Confusion:
    """``confusion`` from ``{(judge, human): how many}`` (values read as booleans)."""
    tp = fp = fn = tn = 0
    for (judge, human), k in counts.items():
        if judge and human:
            tp += k
        elif judge:
            fp += k
        elif human:
            fn += k
        else:
            tn += k
    return Confusion(tp, fp, fn, tn)


def _ratio(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's κ of two raters over nominal values (any number of classes).

    κ = (p_o − p_e) / (1 − p_e) with p_e from the raters' marginals (Cohen 1960,
    as sklearn's ``cohen_kappa_score``). Undefined (None) when p_e = 1, i.e. both
    raters used one and the same class throughout.
    """
    return cohen_kappa_of_counts(Counter(pairs))


def cohen_kappa_of_counts(counts: Mapping[tuple[Any, Any], int]) -> float | None:
    """``cohen_kappa`` from ``{(a, b): how many}``: the same integer sums, so the same
    float, as from the pairs themselves."""
    n = sum(counts.values())
    if n == 0:
        return None
    observed = sum(k for (a, b), k in counts.items() if a == b) / n
    left: Counter[Hashable] = Counter()
    right: Counter[Hashable] = Counter()
    for (a, b), k in counts.items():
        left[a] += k
        right[b] += k
    expected = sum(left[c] * right.get(c, 0) for c in left) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def binary_stats(pairs: Sequence[tuple[bool, bool]]) -> dict[str, Any]:
    """The ``agreement --json`` per-label block (docs/agreement.md): n, accuracy, κ, precision, recall, F1, TPR, TNR."""
    return binary_stats_of_counts(Counter((bool(j), bool(h)) for j, h in pairs))


def binary_stats_of_counts(counts: Mapping[tuple[Any, Any], int]) -> dict[str, Any]:
    """``binary_stats`` from ``{(judge, human): how many}`` boolean pair counts (a
    report over many records keeps these counts, not every item)."""
    c = confusion_of_counts(counts)
    return {
        "n": c.n,
        "accuracy": _ratio(c.tp + c.tn, c.n),
        "kappa": cohen_kappa_of_counts(counts),
        "precision": _ratio(c.tp, c.tp + c.fp),
        "recall": _ratio(c.tp, c.tp + c.fn),
        "f1": _ratio(2 * c.tp, 2 * c.tp + c.fp + c.fn),
        "tpr": _ratio(c.tp, c.tp + c.fn),
        "tnr": _ratio(c.tn, c.tn + c.fp),
        "confusion": c.as_json(),
    }


def class_name(value: Any) -> str:
    """A label value as a JSON object key: ``"S"``, ``"0.5"``, ``"1"``, ``"true"``."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def multiclass_stats(pairs: Sequence[tuple[Hashable, Hashable]]) -> dict[str, Any]:
    """Accuracy, κ and the full judge × human matrix for a label with several values."""
    return multiclass_stats_of_counts(Counter(pairs))


def multiclass_stats_of_counts(counts: Mapping[tuple[Any, Any], int]) -> dict[str, Any]:
    """``multiclass_stats`` from ``{(judge, human): how many}``, in first-seen order
    (the matrix's rows and columns keep the order the pairs came in)."""
    n = sum(counts.values())
    matrix: dict[str, dict[str, int]] = {}
    for (judge, human), k in counts.items():
        row = matrix.setdefault(class_name(judge), {})
        row[class_name(human)] = row.get(class_name(human), 0) + k
    return {
        "n": n,
        "accuracy": _ratio(sum(k for (j, h), k in counts.items() if j == h), n),
        "kappa": cohen_kappa_of_counts(counts),
        "matrix": matrix,
    }


def percent_agreement(units: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Share of agreeing pairs among all pairs of present values within each unit."""
    agree = total = 0
    for unit in units:
        values = [v for v in unit if v is not None]
        for i in range(len(values)):
            for j in range(i + 1, len(values)):
                total += 1
                agree += values[i] == values[j]
    return _ratio(agree, total)


def coincidences(
    units: Sequence[Sequence[Hashable | None]],
) -> dict[tuple[Hashable, Hashable], float]:
    """Krippendorff's coincidence matrix: each ordered pair of values from different
    raters of a unit with m values adds 1/(m − 1); units with one value add none."""
    out: dict[tuple[Hashable, Hashable], float] = {}
    for unit in units:
        values = [v for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    out[(a, b)] = out.get((a, b), 0.0) + 1 / (m - 1)
    return out


def krippendorff_alpha_nominal(units: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Krippendorff's α for nominal data, missing values allowed.

    ``units`` holds, per unit (item), each rater's value or None. Built from the
    coincidence matrix (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"):
    units with fewer than two values are not pairable and are dropped; each ordered
    pair of values from different raters in a unit with m values adds 1/(m − 1).
    α = 1 − (n − 1) · D_o / Σ_{c≠k} n_c n_k. None when there is no disagreement to
    expect (fewer than two pairable values, or only one value used).
    """
    pairs = coincidences(units)
    totals: dict[Hashable, float] = {}
    for (a, _), weight in pairs.items():
        totals[a] = totals.get(a, 0.0) + weight
    n = sum(totals.values())
    observed = sum(w for (a, b), w in pairs.items() if a != b)
    expected = n * n - sum(t * t for t in totals.values())  # Σ_{c≠k} n_c n_k
    if n <= 1 or expected <= 1e-12:
        return None
    return 1 - (n - 1) * observed / expected


def mean(values: Sequence[float]) -> float | None:
    return None if not values else math.fsum(values) / len(values)


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's r; None with fewer than two points or a constant series.

    (The sums run over ``map`` rather than generator expressions: the same float
    operations in the same order, so the same result, without a Python frame per
    point. The squares stay Python's ``** 2``, which is not always ``d * d``.)"""
    n = len(x)
    if n < 2:
        return None
    mx, my = math.fsum(x) / n, math.fsum(y) / n
    dx, dy = list(map(sub, x, repeat(mx))), list(map(sub, y, repeat(my)))  # a - mx, b - my
    sxy = math.fsum(map(mul, dx, dy))
    sxx = math.fsum(map(pow, dx, repeat(2)))  # (a - mx) ** 2
    syy = math.fsum(map(pow, dy, repeat(2)))
    if sxx == 0 or syy == 0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing the average of the ranks they span.

    numpy's stable sort orders the values as Python's ``sorted`` does (ties in their
    given order) and a run of equal neighbours is a tie; rank (i + j) / 2 + 1 for the
    run from i to j, computed in the same float arithmetic. (The values are read as
    float64: an integer beyond 2**53 would lose its last digits.)"""
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    if n == 0:
        return []
    order = np.argsort(v, kind="stable")
    ordered = v[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    ends = np.append(starts[1:], n) - 1
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.repeat((starts + ends) / 2 + 1, ends - starts + 1)
    return ranks.tolist()


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's ρ: Pearson of average ranks (as ``scipy.stats.spearmanr``)."""
    return pearson(average_ranks(x), average_ranks(y))


def rmse(x: Sequence[float], y: Sequence[float]) -> float | None:
    if not x:
        return None
    return math.sqrt(math.fsum(map(pow, map(sub, x, y), repeat(2))) / len(x))


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile (0 ≤ q ≤ 1) with linear interpolation (numpy's default)."""
    pos = q * (len(sorted_values) - 1)
    low = math.floor(pos)
    high = min(low + 1, len(sorted_values) - 1)
    frac = pos - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * frac


def bootstrap_ci(
    diffs: Sequence[float],
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``diffs``, resampling records.

    ``numpy.random.default_rng(seed)`` draws the record indices of all ``resamples``
    resamples at once, as ``rng.integers(0, n, size=(resamples, n))`` (row b is
    resample b, n = len(diffs), with replacement); the interval is the (1 − level)/2
    and (1 + level)/2 quantiles of the resampled means, interpolated linearly
    (``percentile``). Seeded, so a report can be reproduced exactly.
    """
    return bootstrap_cis([diffs], seed, resamples, level)[0]


def import_bootstrap() -> None:
    """Import what ``bootstrap_cis`` draws with (numpy, and its ``random``, which
    ``import numpy`` leaves to its first use) ahead of the call, where the caller has
    something to wait for meanwhile."""
    import numpy.random  # noqa: F401


# resamples drawn at a time: 32 × n indices in memory, not resamples × n (at n = 10,000
# they stay in the L2 cache while every metric takes from them: 64 rows were ~15% slower)
RESAMPLE_CHUNK = 32
# at most this many bytes of the values taken for all the series of one length at a
# time: a chunk has fewer rows where there are many series or records (26 rows for
# four series of 10,000 records), so memory stays bounded whatever their number
TAKE_BYTES = 8 << 20


def bootstrap_cis(
    series: Sequence[Sequence[float]],
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = 0.95,
) -> list[tuple[float, float] | None]:
    """``bootstrap_ci`` of each series (None for an empty one).

    The draw depends only on the seed and the series' length, so series of the same
    length share one draw: the result is each series' own ``bootstrap_ci``, for the cost
    of one. The indices come in chunks of at most ``RESAMPLE_CHUNK`` rows, which
    numpy's generator yields as the same stream as one ``(resamples, n)`` array.

    Each chunk takes the values of every series of that length in one ``take`` and sums
    them in one ``sum`` (each resample's values still summed as one contiguous row, so
    the same floats): the report runs this beside the label count, and every numpy
    call that lets go of the interpreter has to wait to get it back from the count,
    so fewer calls finish sooner (issue 27: three per chunk, not one per series).
    """
    if seed < 0:
        raise ValueError(f"the bootstrap seed must be 0 or more, got {seed}")
    import numpy as np  # here: `import ragreview.core` stays standard library only

    out: list[tuple[float, float] | None] = [None] * len(series)
    by_length: dict[int, list[int]] = {}
    for i, values in enumerate(series):
        if len(values):
            by_length.setdefault(len(values), []).append(i)
    tail = (1 - level) / 2
    for n, members in by_length.items():
        table = np.array([np.asarray(series[i], dtype=np.float64) for i in members])
        sums = np.empty((len(members), resamples))
        rng = np.random.default_rng(seed)
        rows = max(1, min(RESAMPLE_CHUNK, TAKE_BYTES // (8 * len(members) * n)))
        # (one buffer for every take: no page faults)
        drawn = np.empty(len(members) * rows * n)
        for start in range(0, resamples, rows):
            idx = rng.integers(0, n, size=(min(rows, resamples - start), n))
            into = drawn[: len(members) * idx.size].reshape(len(members), len(idx), n)
            # mode="wrap": the indices are in range, so the values are take's own; it
            # skips take's bounds check, a fifth of the bootstrap's instructions
            np.take(table, idx, axis=1, mode="wrap", out=into)
            sums[:, start : start + len(idx)] = into.sum(axis=2)
        for row, i in enumerate(members):
            means = sorted((sums[row] / n).tolist())
            out[i] = (percentile(means, tail), percentile(means, 1 - tail))
    return out


def metric_stats(
    pairs: Sequence[tuple[float, float]],
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> dict[str, Any]:
    """The ``agreement --json`` per-metric block (docs/agreement.md) from per-record ``(judge, reviewed)`` values."""
    return metrics_stats({"": pairs}, seed, resamples)[""]


def metric_diffs(pairs_by_metric: Mapping[str, Sequence[tuple[float, float]]]) -> list[list[float]]:
    """Each metric's judge − reviewed differences, in the mapping's order: the series
    ``metrics_stats`` bootstraps (``bootstrap_cis(metric_diffs(p), seed, resamples)``)."""
    return [
        list(map(sub, map(float, map(_first, pairs)), map(float, map(_second, pairs))))
        for pairs in pairs_by_metric.values()
    ]


def metrics_stats(
    pairs_by_metric: Mapping[str, Sequence[tuple[float, float]]],
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> dict[str, dict[str, Any]]:
    """``metric_stats`` of each metric, their bootstraps drawn together (``bootstrap_cis``).
    (The report computes the two halves on different threads: ``metrics_described`` and
    the intervals, put together by ``with_intervals``.)"""
    cis = bootstrap_cis(metric_diffs(pairs_by_metric), seed, resamples)
    return with_intervals(metrics_described(pairs_by_metric), cis)


def metrics_described(
    pairs_by_metric: Mapping[str, Sequence[tuple[float, float]]],
) -> dict[str, dict[str, Any]]:
    """Each metric's ``metrics_stats`` block but its interval."""
    out = {}
    for name, pairs in pairs_by_metric.items():
        judge = list(map(float, map(_first, pairs)))
        reviewed = list(map(float, map(_second, pairs)))
        judge_mean, reviewed_mean = mean(judge), mean(reviewed)
        bias = None if judge_mean is None or reviewed_mean is None else judge_mean - reviewed_mean
        out[name] = {
            "n": len(judge),
            "judge_mean": judge_mean,
            "effective_mean": reviewed_mean,
            "bias": bias,
            "pearson": pearson(judge, reviewed),
            "spearman": spearman(judge, reviewed),
            "rmse": rmse(judge, reviewed),
        }
    return out


def with_intervals(
    described: Mapping[str, Mapping[str, Any]], cis: Sequence[tuple[float, float] | None]
) -> dict[str, dict[str, Any]]:
    """``metrics_described``' blocks with each metric's interval (``bootstrap_cis`` of
    ``metric_diffs``, in the same order), keys in the documented order."""
    out = {}
    for (name, block), ci in zip(described.items(), cis):
        out[name] = {
            "n": block["n"],
            "judge_mean": block["judge_mean"],
            "effective_mean": block["effective_mean"],
            "bias": block["bias"],
            "ci_low": None if ci is None else ci[0],
            "ci_high": None if ci is None else ci[1],
            "pearson": block["pearson"],
            "spearman": block["spearman"],
            "rmse": block["rmse"],
        }
    return out
