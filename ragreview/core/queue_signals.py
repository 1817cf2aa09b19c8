"""What makes a record worth reviewing next, from signals that exist before any human
looks (docs/estimate.md). Each function gives one non-negative score per record;
``sampling.mixed_weights`` turns scores into draw weights."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

Values = Mapping[str, float | None]


def impact(records: Sequence[Values], sizes: Sequence[int]) -> list[float]:
    """How far flipping the record's labels could move the dataset headline.

    The headline of a metric is read as its mean over the labelled items of the records
    it is defined on, each record weighing as many items as it has judge labels
    (``sizes``, at least 1): a record with 40 facts carries 20 times the headline of one
    with 2. Flipping the record's labels can take its value v anywhere in [0, 1], so per
    metric whose values all lie in [0, 1] it can move the headline by
    size · max(v, 1 − v) / Σ sizes; the record's score is its largest over its metrics.
    Counts and lengths (values outside [0, 1]) are left out: they have no bound.
    (Before issue 27 the size was left out, every record weighing 1: on a dataset of one
    family the scores then varied by at most 2x and the draw was nearly ``random``.)

    ``impact_array`` computes the same over a whole dataset at once; this is its
    definition."""
    total: dict[str, int] = {}
    bounded: dict[str, bool] = {}
    for values, size in zip(records, sizes, strict=True):
        for name, v in values.items():
            if v is None:
                continue
            total[name] = total.get(name, 0) + max(1, size)
            bounded[name] = bounded.get(name, True) and 0.0 <= v <= 1.0
    out = []
    for values, size in zip(records, sizes, strict=True):
        moves = [
            max(1, size) * max(v, 1.0 - v) / total[name]
            for name, v in values.items()
            if v is not None and bounded[name]
        ]
        out.append(max(moves, default=0.0))
    return out


def impact_array(sizes: Any, entry_record: Any, entry_name: Any, entry_value: Any) -> Any:
    """``impact`` for a whole dataset in one numpy pass (``queue --strategy impact``,
    from the stored signals: ``store.record_signals``): ``sizes`` per record, and each
    defined metric value as an entry (record index, metric number, value).

    Each step is the IEEE operation the SQL before it did (issue 27: size · max(v, 1 − v)
    then / Σ size, the sums exact integers in doubles), so the scores are bit for bit
    those of the SQL (tests/store/test_queue_draws_unchanged.py)."""
    import numpy as np

    size = np.maximum(np.asarray(sizes, dtype=np.int64), 1)[entry_record]
    names = np.asarray(entry_name, dtype=np.intp)
    values = np.asarray(entry_value, dtype=float)
    slots = int(names.max()) + 1 if len(names) else 0
    total = np.bincount(names, weights=size, minlength=slots)
    unbounded = np.bincount(names, weights=(values < 0) | (values > 1), minlength=slots)
    move = size * np.maximum(values, 1.0 - values) / total[names]
    move[unbounded[names] > 0] = 0.0  # counts and lengths: no bound, left out (a score is > 0)
    scores = np.zeros(len(sizes))
    np.maximum.at(scores, entry_record, move)
    return scores


def mismatch(stored: Sequence[Values], judge: Sequence[Values]) -> list[float]:
    """Σ |stored − recomputed| over the record's metrics that have both (the source's
    own score disagreeing with ours points at a label or a parsing problem)."""
    out = []
    for s, j in zip(stored, judge):
        total = 0.0
        for name, sv in s.items():
            jv = j.get(name)
            if sv is not None and jv is not None:
                total += abs(sv - jv)
        out.append(total)
    return out


def logprob_uncertainty(logprobs: Iterable[float]) -> float:
    """1 − the probability of the judge's verdict, for the record's least sure item
    (a verdict's log-probability is that of the answer the judge gave, its most likely)."""
    return max((1.0 - math.exp(min(0.0, lp)) for lp in logprobs), default=0.0)


def run_entropy(items: Mapping[Any, Sequence[Hashable]]) -> float:
    """The largest entropy (in bits) of an item's values across judge runs: 0 when every
    run gave each item the same value."""
    worst = 0.0
    for values in items.values():
        counts: dict[Hashable, int] = {}
        for v in values:
            counts[v] = counts.get(v, 0) + 1
        n = len(values)
        h = -sum(c / n * math.log2(c / n) for c in counts.values())
        worst = max(worst, h)
    return worst
