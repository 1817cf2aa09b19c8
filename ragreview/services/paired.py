"""Paired comparison of two judges on the same records (docs/align.md). In services,
not core: the statistics are computed on numpy arrays throughout.

Two judge runs are scored against the same truth on the same records, so their
difference is measured with a *paired* bootstrap: each resample draws records (the
unit) with replacement and computes both runs' statistic on the same drawn records.
That keeps the records' shared difficulty out of the interval, which two separate
intervals would not.

Inputs are per-record confusion counts ``(tp, fp, fn, tn)`` for each label (judge =
prediction, truth = the other side) and per-record metric differences. The point
estimate is the statistic over all records, so it equals what ``agreement --runs``
prints for each run on these records. Resamples where a statistic is undefined (κ
when both raters used one class, TPR with no positive) are left out of its
interval and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.agreement import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, RESAMPLE_CHUNK, percentile

Counts = tuple[int, int, int, int]  # tp, fp, fn, tn
BETTER, WORSE, CANT_TELL = "better", "worse", "can't tell"
LEVEL = 0.95


def _stats(c: Any) -> dict[str, Any]:
    """κ, TPR and TNR of each row of an (m, 4) count array (NaN where undefined)."""
    import numpy as np

    tp, fp, fn, tn = (c[:, i].astype(np.float64) for i in range(4))
    n = tp + fp + fn + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        po = (tp + tn) / n
        pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
        kappa = np.where((n > 0) & (pe < 1), (po - pe) / (1 - pe), np.nan)
        tpr = np.where(tp + fn > 0, tp / (tp + fn), np.nan)
        tnr = np.where(tn + fp > 0, tn / (tn + fp), np.nan)
    return {"kappa": kappa, "tpr": tpr, "tnr": tnr}


def _number(x: Any) -> float | None:
    import math

    value = float(x)
    return None if math.isnan(value) else value


def verdict(low: float | None, high: float | None, higher_is_better: bool = True) -> str:
    """ "better" when the interval of (candidate − base) lies above 0 (below 0 where
    lower is better), "worse" when on the other side, else "can't tell"."""
    if low is None or high is None:
        return CANT_TELL
    if low > 0:
        return BETTER if higher_is_better else WORSE
    if high < 0:
        return WORSE if higher_is_better else BETTER
    return CANT_TELL


def _interval(values: Any) -> tuple[float | None, float | None, int]:
    import numpy as np

    kept = sorted(values[~np.isnan(values)].tolist())
    if not kept:
        return None, None, 0
    tail = (1 - LEVEL) / 2
    return percentile(kept, tail), percentile(kept, 1 - tail), len(kept)


def _draws(n: int, seed: int, resamples: int) -> Any:
    """The record indices of every resample, ``numpy.random.default_rng(seed)``
    ``integers(0, n, size=(resamples, n))`` drawn in chunks (the same stream)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    for start in range(0, resamples, RESAMPLE_CHUNK):
        yield rng.integers(0, n, size=(min(RESAMPLE_CHUNK, resamples - start), n))


def resampled_stats(
    per_record: Mapping[str, Sequence[Counts]], seed: int, resamples: int
) -> dict[str, dict[str, Any]]:
    """Per label, each statistic over all records and over every resample (one draw
    shared by all labels: they count on the same records)."""
    import numpy as np

    arrays = {
        name: np.asarray(rows, dtype=np.int64).reshape(-1, 4) for name, rows in per_record.items()
    }
    out: dict[str, dict[str, Any]] = {}
    n = len(next(iter(arrays.values()))) if arrays else 0
    sums: dict[str, list[Any]] = {name: [] for name in arrays}
    if n:
        for idx in _draws(n, seed, resamples):
            for name, arr in arrays.items():
                sums[name].append(arr[idx].sum(axis=1))
    for name, arr in arrays.items():
        whole = _stats(arr.sum(axis=0, keepdims=True))
        drawn = _stats(np.concatenate(sums[name])) if sums[name] else None
        out[name] = {"point": whole, "resampled": drawn, "counts": arr.sum(axis=0).tolist()}
    return out


def compare_labels(
    base: Mapping[str, Sequence[Counts]],
    candidate: Mapping[str, Sequence[Counts]],
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> dict[str, dict[str, Any]]:
    """Per label and statistic (κ, TPR, TNR): base, candidate, Δ = candidate − base,
    the paired bootstrap interval of Δ and the verdict. Both mappings hold, per label,
    one row per record in the same record order."""
    names = [n for n in base if n in candidate]
    a = resampled_stats({n: base[n] for n in names}, seed, resamples)
    b = resampled_stats({n: candidate[n] for n in names}, seed, resamples)
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        block: dict[str, Any] = {"n": int(sum(a[name]["counts"]))}
        for stat in ("kappa", "tpr", "tnr"):
            was = _number(a[name]["point"][stat][0])
            now = _number(b[name]["point"][stat][0])
            delta = None if was is None or now is None else now - was
            low = high = None
            used = 0
            if delta is not None and a[name]["resampled"] is not None:
                low, high, used = _interval(b[name]["resampled"][stat] - a[name]["resampled"][stat])
            block[stat] = {
                "base": was,
                "candidate": now,
                "delta": delta,
                "ci_low": low,
                "ci_high": high,
                "resamples_used": used,
                "verdict": verdict(low, high),
            }
        out[name] = block
    return out


def compare_metrics(
    pairs: Mapping[str, Sequence[tuple[float, float, float]]],
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> dict[str, dict[str, Any]]:
    """Per metric, from each record's ``(base judge, candidate judge, reviewed)``
    values: each run's bias (judge mean − reviewed mean), Δ|bias| = |candidate bias| −
    |base bias| with its paired bootstrap interval, and the verdict (lower is better).
    Each metric draws with a fresh ``default_rng(seed)`` over its own records."""
    import numpy as np

    out: dict[str, dict[str, Any]] = {}
    for name, rows in pairs.items():
        arr = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
        n = len(arr)
        block: dict[str, Any] = {"n": n, "base_bias": None, "candidate_bias": None}
        block.update(delta_abs_bias=None, ci_low=None, ci_high=None, verdict=CANT_TELL)
        if n:
            da, db_ = arr[:, 0] - arr[:, 2], arr[:, 1] - arr[:, 2]
            base_bias, cand_bias = float(da.mean()), float(db_.mean())
            deltas = [
                np.abs(db_[idx].mean(axis=1)) - np.abs(da[idx].mean(axis=1))
                for idx in _draws(n, seed, resamples)
            ]
            low, high, _ = _interval(np.concatenate(deltas))
            block.update(
                base_bias=base_bias,
                candidate_bias=cand_bias,
                delta_abs_bias=abs(cand_bias) - abs(base_bias),
                ci_low=low,
                ci_high=high,
                verdict=verdict(low, high, higher_is_better=False),
            )
        out[name] = block
    return out


def self_agreement(
    per_record: Mapping[str, Sequence[Counts]],
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> dict[str, dict[str, Any]]:
    """Per label, κ of a judge against its own repeat (one run as prediction, the
    other as truth: κ is symmetric) with its bootstrap interval over records."""
    got = resampled_stats(per_record, seed, resamples)
    out = {}
    for name, block in got.items():
        low = high = None
        if block["resampled"] is not None:
            low, high, _ = _interval(block["resampled"]["kappa"])
        out[name] = {
            "n": int(sum(block["counts"])),
            "kappa": _number(block["point"]["kappa"][0]),
            "ci_low": low,
            "ci_high": high,
        }
    return out
