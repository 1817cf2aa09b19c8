"""Seeded, optionally stratified, samples of records to review.

Agreement numbers describe the dataset only if the reviewed records are a random
sample of it. ``draw`` picks a simple random sample, or with strata a proportional
stratified one, so unweighted means over the sample estimate the dataset's.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K")


def allocate(sizes: Sequence[int], n: int) -> list[int]:
    """Split ``n`` over strata of these sizes in proportion (largest remainder).

    Each stratum gets ⌊n·N_s/N⌋; the leftover goes one by one to the largest
    fractional parts, earlier strata first on ties. Never more than a stratum holds.
    """
    total = sum(sizes)
    if not 0 <= n <= total:
        raise ValueError(f"cannot draw {n} of {total}")
    if total == 0:
        return [0] * len(sizes)
    exact = [n * size / total for size in sizes]
    quotas = [math.floor(x) for x in exact]
    order = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - quotas[i]), i))
    for i in order[: n - sum(quotas)]:
        quotas[i] += 1
    return quotas


def draw(units: Sequence[tuple[K, Hashable]], n: int, seed: int) -> list[K]:
    """``n`` keys from ``(key, stratum)`` units (in file order), in file order.

    Strata are allocated proportionally; within each, ``random.Random(seed).sample``.
    Give every unit the same stratum for a simple random sample.
    """
    strata: dict[Hashable, list[int]] = {}
    for index, (_, stratum) in enumerate(units):
        strata.setdefault(stratum, []).append(index)
    groups = list(strata.values())
    quotas = allocate([len(g) for g in groups], n)
    rng = random.Random(seed)
    chosen: list[int] = []
    for group, quota in zip(groups, quotas):
        chosen.extend(rng.sample(group, quota))
    return [units[i][0] for i in sorted(chosen)]


# -- weighted review queues (docs/estimate.md) ------------------------------------------

UNIFORM_SHARE = 0.2  # of each record's weight spread evenly, so every record can be drawn


def mixed_weights(scores: Sequence[float], uniform_share: float = UNIFORM_SHARE) -> list[float]:
    """Weights summing to 1: ``uniform_share`` spread evenly, the rest in proportion to
    the (non-negative) scores. All scores 0 (or a share of 1): uniform weights."""
    n = len(scores)
    if n == 0:
        return []
    total = sum(scores)
    if total <= 0 or uniform_share >= 1:
        return [1.0 / n] * n
    return [(1 - uniform_share) * s / total + uniform_share / n for s in scores]


def inclusion(weight: float, threshold: float) -> float:
    """π = 1 − exp(−threshold · weight): the chance that a record of this weight has an
    exponential key ``E / weight`` (E ~ Exp(1)) below ``threshold``."""
    if math.isinf(threshold):
        return 1.0
    return -math.expm1(-threshold * weight)


def threshold(weights: Sequence[float], n: int) -> float:
    """The key threshold τ at which the inclusion probabilities sum to ``n``
    (Σ 1 − exp(−τ w_i) = n; infinite when ``n`` is every record)."""
    if not 0 < n <= len(weights):
        raise ValueError(f"cannot draw {n} of {len(weights)}")
    if n == len(weights):
        return math.inf
    # f(τ) = Σ π_i is increasing and concave, and f(n) ≤ n (Σw = 1): Newton's method
    # from τ = n climbs monotonically to the root.
    tau = float(n)
    for _ in range(200):
        f = sum(-math.expm1(-tau * w) for w in weights) - n
        slope = sum(w * math.exp(-tau * w) for w in weights)
        if slope <= 0:
            break
        step = -f / slope
        tau += step
        if abs(step) <= 1e-13 * tau:
            break
    return tau


def poisson_draw(
    weights: Sequence[float], n: int, seed: int
) -> tuple[float, list[tuple[int, float, float]]]:
    """A Poisson sample of expected size ``n``: ``(τ, [(index, key, π), …])`` in draw order.

    Each record gets a key ``E_i / w_i`` (E_i ~ Exp(1) from ``random.Random(seed)``) and
    is drawn when its key is below τ, independently of the others, so its inclusion
    probability is exactly π_i = 1 − exp(−τ w_i) and Σπ_i = n. Ordering the drawn records
    by key is successive sampling proportional to weight (the likeliest first), and the
    first k of them are the records with the k smallest keys: a sample of the same kind
    at a lower threshold, which is what a partly reviewed queue is.
    """
    tau = threshold(weights, n)
    rng = random.Random(seed)
    keys = [rng.expovariate(1.0) / w if w > 0 else math.inf for w in weights]
    drawn = sorted((k, i) for i, k in enumerate(keys) if k < tau)
    return tau, [(i, k, inclusion(weights[i], tau)) for k, i in drawn]
