"""The corrected estimate (core.estimate) and the weighted draw it relies on
(core.sampling.poisson_draw): hand-computed cases, then a seeded simulation of the
issue's "done when" — coverage of the 95 % interval, mean error, and width against the
reviewers-only interval."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from ragreview.core import estimate as E
from ragreview.core import queue_signals, sampling


def test_hand_computed_power_tuned_estimate() -> None:
    # N = 10 records, judge sum 6; three reviewed, each drawn with π = 1/2, w = (1-π)/π² = 2.
    # λ = Σw·f·y / Σw·f² = 2·(1 + 0 + 0) / 2·(1 + 0 + 1) = 1/2
    # θ = (λ·6 + Σ(y − λf)/π) / N = (3 + (0.5 + 1 − 0.5)/0.5) / 10 = 0.5
    # V = Σ w (y − λf)² / N² = 2·(0.25 + 1 + 0.25) / 100 = 0.03
    est = E.estimate(10, 6.0, [(1.0, 1.0, 0.5), (0.0, 1.0, 0.5), (1.0, 0.0, 0.5)])
    assert est.lam == pytest.approx(0.5)
    assert est.estimate == pytest.approx(0.5)
    assert est.variance == pytest.approx(0.03)
    half = 1.959963984540054 * math.sqrt(0.03)
    assert est.ci == pytest.approx((0.5 - half, 0.5 + half))
    assert E.halfwidth(est) == pytest.approx(half)
    assert est.n_used == 3


def test_lambda_is_clipped_to_between_reviewers_alone_and_plain_ppi() -> None:
    # y = 2f: unclipped λ would be 2; 1 is plain PPI: θ = (F + Σ(y − f)/π) / N
    est = E.estimate(4, 2.0, [(0.5, 1.0, 0.5), (0.25, 0.5, 0.5)])
    assert est.lam == 1.0
    assert est.estimate == pytest.approx((2.0 + (0.5 + 0.25) / 0.5) / 4)
    # y against f negatively: λ = 0, the reviewers alone (Horvitz–Thompson)
    est = E.estimate(4, 2.0, [(1.0, 0.0, 0.5), (0.0, 1.0, 0.5)])
    assert est.lam == 0.0
    assert est.estimate == pytest.approx((0.0 + 1.0 / 0.5) / 4)


def test_undefined_and_degenerate_cases() -> None:
    assert E.estimate(10, 5.0, [(1.0, 1.0, 0.5)]) == E.Estimate(None, None, 1, None, None)
    assert E.estimate(0, 0.0, []).estimate is None
    census = E.estimate(3, 2.0, [(1.0, 0.0, 1.0), (1.0, 1.0, 1.0), (0.0, 0.0, 1.0)])
    assert census.estimate == pytest.approx(1 / 3) and census.variance == 0.0  # every record seen
    with pytest.raises(ValueError):
        E.estimate(3, 2.0, [(1.0, 0.0, 0.0), (1.0, 1.0, 0.5)])


def test_more_reviews_for_a_target_halfwidth() -> None:
    est = E.Estimate(0.5, (0.46, 0.54), 50, 1.0, 0.0004)
    # n·V·z²/h² = 50 · 0.0004 · 3.8415 / 0.0004 = 192.07 -> 193 in all, 143 more
    assert E.more_reviews(est, 0.02) == 143
    assert E.more_reviews(est, 0.5) == 0  # reached (and past MIN_STOP used records)
    assert E.more_reviews(E.Estimate(0.5, (0.5, 0.5), 4, 1.0, 0.0), 0.02) == E.MIN_STOP - 4
    assert E.more_reviews(E.estimate(10, 5.0, []), 0.02) is None


def test_inclusion_probabilities_sum_to_the_expected_size() -> None:
    rng = random.Random(5)
    scores = [rng.random() ** 3 for _ in range(500)]
    weights = sampling.mixed_weights(scores)
    assert sum(weights) == pytest.approx(1.0)
    assert min(weights) >= sampling.UNIFORM_SHARE / 500  # every record can be drawn
    for n in (1, 37, 250, 499):
        tau = sampling.threshold(weights, n)
        pis = [sampling.inclusion(w, tau) for w in weights]
        assert sum(pis) == pytest.approx(n, rel=1e-9)
        assert all(0 < p <= 1 for p in pis)
    assert sampling.threshold(weights, 500) == math.inf
    # the draw sizes average n (Poisson sampling: each record independently)
    sizes = [len(sampling.poisson_draw(weights, 50, seed)[1]) for seed in range(300)]
    assert abs(sum(sizes) / 300 - 50) < 3 * math.sqrt(50 / 300)


def test_poisson_draw_is_reproducible_and_in_key_order() -> None:
    weights = sampling.mixed_weights([float(i % 7) for i in range(200)])
    tau, first = sampling.poisson_draw(weights, 20, seed=11)
    assert sampling.poisson_draw(weights, 20, seed=11) == (tau, first)
    assert sampling.poisson_draw(weights, 20, seed=12)[1] != first
    keys = [k for _, k, _ in first]
    assert keys == sorted(keys) and all(k < tau for k in keys)
    assert all(p == sampling.inclusion(weights[i], tau) for i, _, p in first)


def test_impact_puts_first_the_record_that_moves_its_mean_most() -> None:
    # a's metric is defined on 2 records (each moves its mean by up to 1/2), b's on 4
    records = [
        {"a": 0.0, "b": 0.5},
        {"a": 0.5, "b": 0.5},
        {"b": 0.9},
        {"b": 0.2, "count": 12.0},  # a count: unbounded, left out
    ]
    assert queue_signals.impact(records, [1, 1, 1, 1]) == pytest.approx([0.5, 0.25, 0.225, 0.2])


def test_impact_weighs_a_record_by_its_labels() -> None:
    # one metric, equal values: only the sizes differ. Sizes 6, 2, 1, 1 (Σ 10); the
    # move is size · max(v, 1 − v) / 10 with max(v, 1 − v) = 0.75
    records = [{"m": 0.25}, {"m": 0.25}, {"m": 0.75}, {"m": 0.75}]
    assert queue_signals.impact(records, [6, 2, 1, 0]) == pytest.approx(
        [0.45, 0.15, 0.075, 0.075]  # a record without labels weighs 1
    )


def test_uncertainty_and_run_signals() -> None:
    assert queue_signals.logprob_uncertainty([math.log(0.9), math.log(0.6)]) == pytest.approx(0.4)
    assert queue_signals.logprob_uncertainty([]) == 0.0
    items = {("supported", "a"): ["true", "true"], ("supported", "b"): ["true", "false"]}
    assert queue_signals.run_entropy(items) == pytest.approx(1.0)


# -- simulation -----------------------------------------------------------------------


def _simulate(design: str, reps: int = 2000, n_records: int = 2000, n: int = 200):
    """Seeded synthetic dataset: true human labels with mean ≈ 0.7 and a judge whose
    error rate is 10 % on average, higher where it is less sure (its uncertainty ``u``).
    Repeated Poisson draws of expected size ``n``, uniform or weighted by ``u``."""
    rng = np.random.default_rng(7)
    y = (rng.random(n_records) < 0.7).astype(float)
    u = rng.random(n_records)
    f = np.where(rng.random(n_records) < 0.2 * u, 1 - y, y)
    truth = y.mean()
    scores = [1.0] * n_records if design == "uniform" else u.tolist()
    share = 1.0 if design == "uniform" else sampling.UNIFORM_SHARE
    w = np.array(sampling.mixed_weights(scores, share))
    tau = sampling.threshold(w.tolist(), n)
    pi = -np.expm1(-tau * w)
    covered, errors, widths, human_widths = 0, [], [], []
    for _ in range(reps):
        drawn = np.nonzero(rng.exponential(size=n_records) / w < tau)[0]  # as poisson_draw
        used = list(zip(f[drawn].tolist(), y[drawn].tolist(), pi[drawn].tolist()))
        est = E.estimate(n_records, float(f.sum()), used)
        assert est.ci is not None and est.estimate is not None
        covered += est.ci[0] <= truth <= est.ci[1]
        errors.append(est.estimate - truth)
        widths.append(est.ci[1] - est.ci[0])
        k = len(drawn)  # the reviewers alone, as a simple random sample of k
        human_widths.append(2 * E.Z95 * math.sqrt((1 - k / n_records) * y[drawn].var(ddof=1) / k))
    errors_arr = np.array(errors)
    return covered / reps, errors_arr, float(np.mean(widths)), float(np.mean(human_widths))


@pytest.mark.parametrize("design", ["uniform", "uncertainty"])
def test_simulation_coverage_error_and_width(design: str) -> None:
    coverage, errors, width, human_width = _simulate(design)
    assert 0.93 <= coverage <= 0.97
    mc_se = errors.std(ddof=1) / math.sqrt(len(errors))
    assert abs(errors.mean()) <= 3 * mc_se
    assert width < 0.8 * human_width  # the judge correlates with the truth: it helps
