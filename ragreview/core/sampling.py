"""Seeded, optionally stratified, samples of records to review.

Agreement numbers describe the dataset only if the reviewed records are a random
sample of it. ``draw`` picks a simple random sample, or with strata a proportional
stratified one, so unweighted means over the sample estimate the dataset's.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
from typing import Any, TypeVar

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

# The weights, threshold and keys of a queue are computed with numpy (imported inside
# the functions: importing core loads no third-party module): `queue --n 200` at 300,000
# records spent 15-18 s in per-record Python loops (issue 27). Every per-record value is
# the same IEEE operation as the loop's, in the same order, and the keys come from the
# same `random.Random(seed)` calls, so a seed draws the same records as before.


def mixed_weights(scores: Sequence[float], uniform_share: float = UNIFORM_SHARE) -> list[float]:
    """Weights summing to 1: ``uniform_share`` spread evenly, the rest in proportion to
    the (non-negative) scores. All scores 0 (or a share of 1): uniform weights."""
    return mixed_weight_array(scores, uniform_share).tolist()


def mixed_weight_array(scores: Sequence[float], uniform_share: float = UNIFORM_SHARE) -> Any:
    """``mixed_weights`` as a numpy array."""
    import numpy as np

    n = len(scores)
    total = sum(scores)  # Python's sum, as before: the weights stay bit for bit the same
    if n == 0 or total <= 0 or uniform_share >= 1:
        return np.full(n, 1.0 / n if n else 0.0)
    s = np.asarray(scores, dtype=float)
    return (1 - uniform_share) * s / total + uniform_share / n


def inclusion(weight: float, threshold: float) -> float:
    """π = 1 − exp(−threshold · weight): the chance that a record of this weight has an
    exponential key ``E / weight`` (E ~ Exp(1)) below ``threshold``."""
    if math.isinf(threshold):
        return 1.0
    return -math.expm1(-threshold * weight)


def threshold(weights: Sequence[float] | Any, n: int) -> float:
    """The key threshold τ at which the inclusion probabilities sum to ``n``
    (Σ 1 − exp(−τ w_i) = n; infinite when ``n`` is every record)."""
    import numpy as np

    w = np.asarray(weights, dtype=float)
    if not 0 < n <= len(w):
        raise ValueError(f"cannot draw {n} of {len(w)}")
    if n == len(w):
        return math.inf
    # f(τ) = Σ π_i is increasing and concave, and f(n) ≤ n (Σw = 1): Newton's method
    # from τ = n climbs monotonically to the root.
    tau, previous = float(n), math.inf
    for _ in range(200):
        # cumsum adds left to right like Python's sum() did (numpy's sum is pairwise):
        # the same iterations give τ bit for bit as before, and with it every π
        f = float(np.cumsum(-np.expm1(-tau * w))[-1]) - n
        slope = float(np.cumsum(w * np.exp(-tau * w))[-1])
        if slope <= 0:
            break
        step = -f / slope
        tau += step
        if abs(step) <= 1e-13 * tau:
            break
        # Converged to the sums' rounding noise: Newton's steps stop shrinking. On large
        # uniform draws (300,000 records) that happens above 1e-13 and the code before
        # issue 27 went on for all 200 iterations (most of `queue`'s 15 s), moving τ
        # only within that noise (~1e-12 relative): the same records are drawn.
        if abs(step) <= 1e-9 * tau and abs(step) * 2 > previous:
            break
        previous = abs(step)
    return tau


def poisson_draw(
    weights: Sequence[float] | Any, n: int, seed: int
) -> tuple[float, list[tuple[int, float, float]]]:
    """A Poisson sample of expected size ``n``: ``(τ, [(index, key, π), …])`` in draw order.

    Each record gets a key ``E_i / w_i`` (E_i ~ Exp(1) from ``random.Random(seed)``, one
    draw per record of positive weight, in record order) and is drawn when its key is
    below τ, independently of the others, so its inclusion probability is exactly
    π_i = 1 − exp(−τ w_i) and Σπ_i = n. Ordering the drawn records by key (then index) is
    successive sampling proportional to weight (the likeliest first), and the first k of
    them are the records with the k smallest keys: a sample of the same kind at a lower
    threshold, which is what a partly reviewed queue is.
    """
    import numpy as np

    w = np.asarray(weights, dtype=float)
    tau = threshold(w, n)
    positive = np.flatnonzero(w > 0)
    # random.Random(seed).expovariate(1.0) for each record of positive weight, in order,
    # taken apart: it is -log(1.0 - random()) / 1.0. The uniforms come from numpy's
    # Mersenne Twister started in Python's state: both make a double from two 32-bit
    # outputs the same way (genrand_res53), so they are the same numbers without a
    # Python call per record; then each step is the same IEEE operation (math.log
    # itself, not numpy's). tests/store/test_queue_draws_unchanged.py checks the keys.
    state = random.Random(seed).getstate()[1]
    twister = np.random.RandomState()
    twister.set_state(("MT19937", np.array(state[:624], dtype=np.uint32), state[624], 0, 0.0))
    uniforms = twister.random_sample(len(positive))
    # Only the records whose key can be below τ need math.log: numpy's log is within a
    # few ulp of it (~1e-16 relative), so a key numpy puts above τ·(1 + 1e-9) is above τ
    # whatever the last bits, and the others get their keys exactly as before (the
    # Python call per record was most of a 300,000-record draw).
    near = -np.log(1.0 - uniforms) / w[positive] < tau * (1 + 1e-9)
    candidates = positive[near]
    exponentials = -np.array(list(map(math.log, (1.0 - uniforms[near]).tolist())), dtype=float)
    keys = np.full(len(w), math.inf)
    keys[candidates] = exponentials / w[candidates]
    below = np.flatnonzero(keys < tau)
    order = below[np.argsort(keys[below], kind="stable")]
    return tau, [(int(i), float(keys[i]), inclusion(float(w[i]), tau)) for i in order.tolist()]
