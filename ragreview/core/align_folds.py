"""Folds and few-shot examples for ``ragreview align`` (docs/align.md), without leakage.

The reviewed records are split into k folds; the examples shown when judging a
record of fold f are corrections from records of the *other* folds only, so no record
is ever judged with its own correction (or any correction of the same record) among
the examples. Pure functions, seeded with ``random.Random`` so that a run can be
reproduced from its stored parameters.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Correction:
    """One item a reviewer changed: the judge said ``judge``, the reviewer ``human``."""

    record: str  # record id
    name: str
    target: str
    judge: Any
    human: Any
    reason: str | None = None
    rule: str | None = None  # a guideline rule id, when the correction names one
    rule_text: str | None = None

    def key(self) -> list[str]:
        return [self.record, self.name, self.target]


def assign_folds(record_ids: Sequence[str], folds: int, seed: int) -> dict[str, int]:
    """Each record's fold (0 … folds − 1): the ids shuffled by ``Random(seed)``, then
    dealt round robin, so fold sizes differ by one at most."""
    if folds < 2:
        raise ValueError(f"align needs 2 folds or more, got {folds}")
    order = list(record_ids)
    random.Random(seed).shuffle(order)
    return {rid: i % folds for i, rid in enumerate(order)}


def examples_for(
    fold: int,
    fold_of: Mapping[str, int],
    corrections: Sequence[Correction],
    limit: int,
    seed: int,
) -> list[Correction]:
    """The examples of one fold: corrections of records in other folds (never this
    fold's), at most ``limit`` of them drawn by ``Random(f"{seed}/{fold}")`` when there
    are more, kept in the corrections' order."""
    pool = [i for i, c in enumerate(corrections) if fold_of.get(c.record, fold) != fold]
    if len(pool) > limit:
        pool = sorted(random.Random(f"{seed}/{fold}").sample(pool, limit))
    return [corrections[i] for i in pool]


def show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
