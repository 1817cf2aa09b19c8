"""Folds and examples of ``ragreview align`` (core.align_folds): no record's fold ever
shows a correction of a record in the same fold."""

from __future__ import annotations

import pytest

from ragreview.core.align_folds import Correction, assign_folds, examples_for


def test_folds_are_balanced_seeded_and_cover_every_record():
    ids = [f"r{i}" for i in range(23)]
    fold_of = assign_folds(ids, 5, seed=3)
    assert set(fold_of) == set(ids)
    sizes = sorted(list(fold_of.values()).count(f) for f in range(5))
    assert sizes == [4, 4, 5, 5, 5]
    assert assign_folds(ids, 5, seed=3) == fold_of
    assert assign_folds(ids, 5, seed=4) != fold_of
    with pytest.raises(ValueError):
        assign_folds(ids, 1, seed=0)


@pytest.mark.parametrize("seed", range(5))
def test_examples_come_from_other_folds_only(seed):
    ids = [f"r{i}" for i in range(30)]
    fold_of = assign_folds(ids, 4, seed)
    corrections = [Correction(r, "supported", t, False, True) for r in ids for t in "ab"]
    for fold in range(4):
        shown = examples_for(fold, fold_of, corrections, 8, seed)
        assert len(shown) == 8
        assert all(fold_of[c.record] != fold for c in shown)
        assert shown == [c for c in corrections if c in shown]  # kept in their order
        assert examples_for(fold, fold_of, corrections, 8, seed) == shown
    everything = examples_for(0, fold_of, corrections, 1000, seed)
    assert len(everything) == 2 * sum(1 for f in fold_of.values() if f != 0)
