"""The streamed agreement report gives the numbers of the item-by-item one.

``agreement`` keeps per-label counts of ``(judge, human)`` pairs instead of every item
(``label_items.count_pairs``, ``LabelTally``) and draws the bootstrap with numpy. The
references here are the item-by-item definitions: ``label_items.paired`` and
``values`` over every item, κ from the pairs as sklearn's ``cohen_kappa_score``
defines it, and the bootstrap written out as docs/agreement.md describes it.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragreview.core import agreement, agreement_report, label_items
from ragreview.core.labels import CATALOGUE
from ragreview.core.record import Record
from ragreview.store import open_database
from ragreview.store import records as store_records

from ..formats.helpers import FAMILY_SOURCES, map_args, run

SOURCES = FAMILY_SOURCES


def random_value(name: str, record: Record, rng: random.Random, token: str = "no_support"):
    """A value of label ``name`` on ``record``; a ``keys`` list may cite ``token`` (by
    default one that is not a citable key)."""
    spec = CATALOGUE[name]
    if spec.kind == "bool":
        return rng.random() < 0.5
    if spec.kind == "keys":
        keys = [k for k, _ in record.doc_sentences] + [token]
        return rng.sample(keys, min(len(keys), rng.randint(0, 3)))
    if spec.kind == "rating":
        return rng.randint(1, 10)
    return rng.choice(spec.choices)


def perturbed(record: Record, layer: dict, rng: random.Random) -> dict:
    """A copy of ``layer`` with some values changed, removed or added."""
    out = {name: dict(targets) for name, targets in layer.items()}
    for name, spec in CATALOGUE.items():
        if spec.kind == "number":
            continue
        for target in record.targets(spec.target):
            roll = rng.random()
            if roll < 0.15:
                out.setdefault(name, {})[target] = random_value(name, record, rng)
            elif roll < 0.2:
                out.get(name, {}).pop(target, None)
    if rng.random() < 0.3:  # a label on a target the record lacks (a deleted item's)
        name = rng.choice([n for n, spec in CATALOGUE.items() if spec.kind != "number"])
        out.setdefault(name, {})["no-such-key"] = random_value(name, record, rng)
    if rng.random() < 0.1:  # a malformed layer: a list where a choice belongs
        out.setdefault("fact", {})[rng.choice(record.targets("fact") or ("f0",))] = ["S"]
    return {name: targets for name, targets in out.items() if targets}


def fixture_records(tmp_path: Path) -> list[tuple[Record, dict]]:
    out = []
    for i, source in enumerate(SOURCES):
        db_path = tmp_path / f"{i}.db"
        assert run("import", source, "--db", db_path, *map_args(source)).exit_code == 0
        db = open_database(db_path)
        out += [(s.record, s.judge) for s in store_records.iterate(db)]
        db.conn.close()
    return out


def item_by_item(record, judge, human, name, strict=False):
    """The pairs and unpaired count as the item-by-item report counted them."""
    pairs = label_items.paired(record, judge, human, name, strict=strict)
    left = label_items.values(record, judge, name)
    right = label_items.values(record, human, name)
    hashable = label_items.hashable  # a list value (malformed layer) counts as a tuple
    return Counter((hashable(j), hashable(h)) for j, h in pairs), sum(
        1 for item in right if item not in left
    )


def test_count_pairs_equals_the_items_on_every_fixture_record(tmp_path: Path) -> None:
    rng = random.Random(7)
    checked = 0
    for record, judge in fixture_records(tmp_path):
        for _ in range(3):
            human = perturbed(record, judge, rng)
            fake_judge = perturbed(record, judge, rng)
            for name in CATALOGUE:
                # (and one layer on both sides: a reviewed record without overrides,
                # whose effective layer is its judge's own)
                for j, h in (
                    (judge, human),
                    (fake_judge, human),
                    (human, judge),
                    (fake_judge, fake_judge),
                ):
                    if not label_items.applies(record, name, (j, h)):
                        continue
                    got: dict = {}
                    missing = label_items.count_pairs(record, j, h, name, got)
                    want, want_missing = item_by_item(record, j, h, name)
                    assert (dict(got), missing) == (dict(want), want_missing), (record.id, name)
                    if label_items.is_multiclass(name):  # the matrix keeps first-seen order
                        assert list(got) == list(want)
                    checked += 1
    assert checked > 1000


def old_kappa(pairs):
    """Cohen's κ from the pairs (sklearn's cohen_kappa_score, unweighted)."""
    n = len(pairs)
    observed = sum(1 for a, b in pairs if a == b) / n
    left, right = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(left[c] * right.get(c, 0) for c in left) / (n * n)
    return None if expected == 1 else (observed - expected) / (1 - expected)


@pytest.mark.parametrize("seed", range(20))
def test_statistics_from_counts_equal_those_from_the_pairs(seed: int) -> None:
    rng = random.Random(seed)
    values = ["S", "NS", "IR"]
    pairs = [(rng.choice(values), rng.choice(values)) for _ in range(rng.randint(1, 60))]
    counts = Counter(pairs)
    assert agreement.cohen_kappa_of_counts(counts) == old_kappa(pairs)
    assert agreement.multiclass_stats_of_counts(counts) == agreement.multiclass_stats(pairs)
    bools = [(a == "S", b != "NS") for a, b in pairs]
    block = agreement.binary_stats_of_counts(Counter(bools))
    assert block == agreement.binary_stats(bools)
    assert block["kappa"] == old_kappa(bools)


def reference_ci(diffs, seed, resamples, level=0.95):
    """docs/agreement.md's bootstrap, written out: one (resamples, n) draw."""
    n = len(diffs)
    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    means = np.asarray(diffs, dtype=np.float64)[idx].sum(axis=1) / n
    tail = (1 - level) / 2
    return tuple(float(np.percentile(means, q * 100)) for q in (tail, 1 - tail))


@pytest.mark.parametrize(("n", "resamples", "seed"), [(1, 5, 0), (7, 131, 3), (250, 2000, 11)])
def test_bootstrap_is_the_documented_draw_in_chunks(n: int, resamples: int, seed: int) -> None:
    rng = random.Random(n)
    diffs = [rng.choice([-1.0, 0.0, 0.25, 1.0]) for _ in range(n)]
    got = agreement.bootstrap_ci(diffs, seed, resamples)
    assert got == pytest.approx(reference_ci(diffs, seed, resamples), rel=1e-12, abs=1e-15)
    assert agreement.bootstrap_ci(diffs, seed, resamples) == got  # same seed, same interval
    assert agreement.bootstrap_ci([], seed, resamples) is None


def test_metrics_drawn_together_equal_each_drawn_alone() -> None:
    rng = random.Random(5)
    by_metric = {
        name: [(rng.random(), rng.random()) for _ in range(size)]
        for name, size in (("a", 40), ("b", 40), ("c", 13), ("d", 0))
    }
    together = agreement.metrics_stats(by_metric, seed=4, resamples=300)
    assert together == {n: agreement.metric_stats(p, 4, 300) for n, p in by_metric.items()}


def test_metrics_computed_in_halves_equal_those_computed_at_once() -> None:
    # the report draws the intervals on their own thread and computes the rest on
    # whichever thread is free first: same numbers, same keys in the same order
    rng = random.Random(6)
    by_metric = {
        name: [(rng.random(), rng.choice([0.0, 1.0])) for _ in range(size)]
        for name, size in (("a", 40), ("b", 13), ("c", 0))
    }
    at_once = agreement.metrics_stats(by_metric, seed=2, resamples=300)
    cis = agreement.bootstrap_cis(agreement.metric_diffs(by_metric), 2, 300)
    halves = agreement.with_intervals(agreement.metrics_described(by_metric), cis)
    assert [list(b.items()) for b in halves.values()] == [list(b.items()) for b in at_once.values()]
    assert list(at_once["a"]) == [
        "n", "judge_mean", "effective_mean", "bias", "ci_low", "ci_high",
        "pearson", "spearman", "rmse",
    ]  # fmt: skip
    assert at_once["a"]["ci_low"] is not None and at_once["c"]["ci_low"] is None

    # in the report, with the pairs read on a thread or given, and a count that ends
    # at once (the counting thread computes the rest) or late (the metrics' thread
    # does): the same blocks
    def late() -> Iterator[agreement_report.Reviewed]:
        time.sleep(0.3)
        yield from ()

    for pairs, reviewed in (
        (by_metric, []),
        (agreement_report.Background(lambda: by_metric), []),
        (by_metric, late()),
    ):
        report = agreement_report.build(reviewed, pairs, seed=2, resamples=300)
        assert [list(b.items()) for b in report["metrics"].values()] == [
            list(b.items()) for b in at_once.values()
        ]


def test_negative_seed_is_refused() -> None:
    with pytest.raises(ValueError, match="seed"):
        agreement.bootstrap_ci([1.0, 2.0], seed=-1)


def test_report_over_a_stream_equals_the_report_over_a_list(tmp_path: Path) -> None:
    rng = random.Random(3)
    reviewed = []
    for i, (record, judge) in enumerate(fixture_records(tmp_path)):
        blind = perturbed(record, {}, rng) if i % 4 == 0 else None
        reviewed.append(
            agreement_report.Reviewed(record, judge, perturbed(record, judge, rng), blind)
        )
    per_record = [({"m": rng.random()}, {"m": rng.random()}) for _ in reviewed]
    pairs = agreement_report.metric_pairs(per_record)
    listed = agreement_report.build(reviewed, pairs, resamples=200)
    streamed = agreement_report.build(iter(reviewed), pairs, resamples=200)
    assert streamed == listed
    assert listed["records"] == len(reviewed) and listed["independent"]["records"] > 0
    items = agreement_report.label_agreement((r.record, r.judge, r.effective) for r in reviewed)
    assert (listed["labels"], listed["multiclass"]) == items[:2]
