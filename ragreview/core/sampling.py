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
