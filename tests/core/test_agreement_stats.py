"""Agreement statistics against hand-computed values and the krippendorff package."""

import math
import random

import pytest

from ragreview.core.agreement import (
    average_ranks,
    binary_stats,
    bootstrap_ci,
    cohen_kappa,
    confusion,
    krippendorff_alpha_nominal,
    metric_stats,
    multiclass_stats,
    pearson,
    percent_agreement,
    percentile,
    rmse,
    spearman,
)

T, F = True, False

# judge, human: 3 TP, 1 FP, 2 FN, 4 TN
PAIRS = [(T, T)] * 3 + [(T, F)] + [(F, T)] * 2 + [(F, F)] * 4


def test_confusion_counts_judge_as_prediction():
    c = confusion(PAIRS)
    assert (c.tp, c.fp, c.fn, c.tn, c.n) == (3, 1, 2, 4, 10)


def test_binary_stats_hand_computed():
    s = binary_stats(PAIRS)
    assert s["n"] == 10
    assert s["accuracy"] == pytest.approx(0.7)
    assert s["precision"] == pytest.approx(3 / 4)
    assert s["recall"] == pytest.approx(3 / 5)
    assert s["tpr"] == pytest.approx(3 / 5)
    assert s["tnr"] == pytest.approx(4 / 5)
    assert s["f1"] == pytest.approx(2 / 3)
    # p_o = 0.7; p_e = 0.4·0.5 + 0.6·0.5 = 0.5; κ = 0.2 / 0.5
    assert s["kappa"] == pytest.approx(0.4)
    assert s["confusion"] == {"tp": 3, "fp": 1, "fn": 2, "tn": 4}


def test_undefined_rates_are_none_not_zero():
    s = binary_stats([(F, F), (F, F)])
    assert s["precision"] is None and s["recall"] is None and s["f1"] is None
    assert s["tnr"] == 1.0
    assert s["kappa"] is None  # both raters used one class: p_e = 1
    assert binary_stats([])["accuracy"] is None


def test_kappa_multiclass_hand_computed():
    pairs = [("S", "S"), ("S", "S"), ("S", "NS"), ("NS", "NS"), ("NS", "S"), ("IR", "IR")]
    # p_o = 4/6, p_e = (3·3 + 2·2 + 1·1) / 36 = 14/36, κ = (12/18 − 7/18) / (11/18)
    assert cohen_kappa(pairs) == pytest.approx(5 / 11)
    m = multiclass_stats(pairs)
    assert m["n"] == 6 and m["accuracy"] == pytest.approx(4 / 6)
    assert m["matrix"] == {"S": {"S": 2, "NS": 1}, "NS": {"NS": 1, "S": 1}, "IR": {"IR": 1}}
    assert multiclass_stats([(0.5, 1), (1.0, 1)])["matrix"] == {"0.5": {"1": 1}, "1": {"1": 1}}


def test_kappa_perfect_and_chance():
    assert cohen_kappa([(T, T), (F, F)]) == pytest.approx(1.0)
    # p_o = 0.5, p_e = 0.5 -> 0
    assert cohen_kappa([(T, T), (T, F), (F, T), (F, F)]) == pytest.approx(0.0)


def test_alpha_hand_computed():
    # o_aa = 2, o_ab = o_ba = 1, o_bb = 4; n_a = 3, n_b = 5, n = 8
    # α = 1 − (n − 1)·D_o / Σ_{c≠k} n_c n_k = 1 − 7·2 / 30
    units = [["a", "a"], ["a", "b"], ["b", "b"], ["b", "b"]]
    assert krippendorff_alpha_nominal(units) == pytest.approx(1 - 14 / 30)
    assert percent_agreement(units) == pytest.approx(3 / 4)


def test_alpha_undefined_without_variation():
    assert krippendorff_alpha_nominal([["a", "a"], ["a", None]]) is None
    assert krippendorff_alpha_nominal([["a", None]]) is None


def _reference_alpha(units):
    krippendorff = pytest.importorskip("krippendorff")
    import numpy as np

    codes = {}
    for unit in units:
        for v in unit:
            if v is not None:
                codes.setdefault(v, float(len(codes)))
    data = np.array(
        [[np.nan if u[r] is None else codes[u[r]] for u in units] for r in range(len(units[0]))]
    )
    return krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")


@pytest.mark.parametrize("seed", range(8))
def test_alpha_equals_krippendorff_package(seed):
    rng = random.Random(seed)
    raters = rng.choice([2, 3, 4])
    classes = rng.choice([["S", "NS", "IR"], [True, False], [0, 0.5, 1]])
    units = []
    for _ in range(rng.randint(5, 40)):
        truth = rng.choice(classes)
        units.append(
            [
                None
                if rng.random() < 0.2
                else (truth if rng.random() < 0.7 else rng.choice(classes))
                for _ in range(raters)
            ]
        )
    ours = krippendorff_alpha_nominal(units)
    theirs = _reference_alpha(units)
    if ours is None:
        assert math.isnan(theirs) or theirs == pytest.approx(0.0)  # pragma: no cover
    else:
        assert ours == pytest.approx(theirs, abs=1e-12)


def test_alpha_matches_package_on_krippendorff_example():
    # Krippendorff (2011) nominal example: 4 coders, 12 units, α = 0.743
    rows = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    units = [list(col) for col in zip(*rows)]
    assert krippendorff_alpha_nominal(units) == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha_nominal(units) == pytest.approx(_reference_alpha(units), abs=1e-12)


def test_pearson_spearman_rmse_hand_computed():
    # sxy = 11, sxx = 5, syy = 26
    assert pearson([1, 2, 3, 4], [2, 4, 5, 9]) == pytest.approx(11 / math.sqrt(130))
    assert average_ranks([1, 2, 2, 3]) == [1, 2.5, 2.5, 4]
    # ranks [1, 2.5, 2.5, 4] vs [1, 3, 2, 4]: sxy = 4.5, sxx = 4.5, syy = 5
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(4.5 / math.sqrt(22.5))
    assert rmse([1, 2, 3], [1, 4, 1]) == pytest.approx(math.sqrt(8 / 3))
    assert pearson([1, 1, 1], [1, 2, 3]) is None
    assert pearson([1], [2]) is None


def test_percentile_interpolates_like_numpy():
    assert percentile([0, 1, 2, 3], 0.5) == 1.5
    assert percentile([0, 1, 2, 3], 0.0) == 0
    assert percentile([0, 10], 0.25) == 2.5


def test_bootstrap_interval_hand_derived():
    # diffs {0, 1}: resampled means are 0, ½, 1 with probability ¼, ½, ¼, so the
    # 2.5 % and 97.5 % points of 2000 resamples are 0 and 1.
    assert bootstrap_ci([0.0, 1.0], seed=7) == (0.0, 1.0)
    # diffs {0, 0, 1}: mean 1 has probability 1/27 ≈ 3.7 % > 2.5 %, mean 0 8/27
    assert bootstrap_ci([0.0, 0.0, 1.0], seed=7) == (0.0, 1.0)
    # no spread, no uncertainty
    assert bootstrap_ci([0.2, 0.2, 0.2]) == pytest.approx((0.2, 0.2))
    assert bootstrap_ci([]) is None


def test_bootstrap_is_seeded():
    rng = random.Random(1)
    diffs = [rng.gauss(0, 1) for _ in range(50)]
    assert bootstrap_ci(diffs, seed=3) == bootstrap_ci(diffs, seed=3)
    assert bootstrap_ci(diffs, seed=3) != bootstrap_ci(diffs, seed=4)
    low, high = bootstrap_ci(diffs, seed=3)
    mean = sum(diffs) / len(diffs)
    # the standard error of a mean of 50 N(0,1) draws is ~0.14: the 95 % interval
    # spans about ±1.96·0.14 around the mean
    assert low < mean < high
    assert 0.35 < high - low < 0.75


def test_metric_stats_hand_computed():
    # judge 1, 1, 0.5, 0 ; reviewed 1, 0, 0.5, 0 -> bias = 0.625 − 0.375 = 0.25
    pairs = [(1.0, 1.0), (1.0, 0.0), (0.5, 0.5), (0.0, 0.0)]
    s = metric_stats(pairs, seed=1)
    assert set(s) == {
        "n",
        "judge_mean",
        "effective_mean",
        "bias",
        "ci_low",
        "ci_high",
        "pearson",
        "spearman",
        "rmse",
    }
    assert s["n"] == 4
    assert s["judge_mean"] == pytest.approx(0.625)
    assert s["effective_mean"] == pytest.approx(0.375)
    assert s["bias"] == pytest.approx(0.25)
    # diffs {0, 1, 0, 0}: P(resampled mean = 0) = (3/4)^4 ≈ 32 %, so ci_low = 0;
    # P(mean ≥ 0.75) = P(≥3 ones of 4) = 13/256 ≈ 5.1 % > 2.5 %, P(mean = 1) = 0.4 %
    assert s["ci_low"] == 0.0
    assert s["ci_high"] == 0.75
    assert s["rmse"] == pytest.approx(0.5)  # sqrt(1/4)
    # deviations: judge [.375, .375, −.125, −.625], reviewed [.625, −.375, .125, −.375]
    # sxy = .234375 − .140625 − .015625 + .234375 = .3125; sxx = syy = .6875
    assert s["pearson"] == pytest.approx(0.3125 / 0.6875)


@pytest.mark.parametrize("n", [1, 7, 64, 333, 10_000])
@pytest.mark.parametrize("resamples", [1, 31, 97, 2000])
def test_the_chunked_bootstrap_draws_what_one_array_of_every_resample_draws(
    n: int, resamples: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``bootstrap_cis`` draws its indices ``RESAMPLE_CHUNK`` rows at a time: the same
    intervals as one draw of every resample at once (a chunk of ``resamples`` rows)."""
    from ragreview.core import agreement

    rng = random.Random(n * 1000 + resamples)
    series = [[rng.uniform(-1, 1) for _ in range(n)] for _ in range(3)]
    chunked = agreement.bootstrap_cis(series, seed=5, resamples=resamples)
    monkeypatch.setattr(agreement, "RESAMPLE_CHUNK", resamples)
    assert chunked == agreement.bootstrap_cis(series, seed=5, resamples=resamples)


def _plain_bootstrap_ci(diffs: list[float], seed: int, resamples: int) -> tuple[float, float]:
    """``bootstrap_ci`` as its docstring defines it, with nothing shared or chunked: one
    ``rng.integers(0, n, size=(resamples, n))``, each row's values summed as one row,
    the means sorted and their (1 − 0.95) / 2 and (1 + 0.95) / 2 quantiles interpolated
    (as ``bootstrap_ci`` computes them: 0.025000000000000022, not 0.025)."""
    import numpy as np

    n = len(diffs)
    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    means = sorted((np.asarray(diffs)[idx].sum(axis=1) / n).tolist())
    tail = (1 - 0.95) / 2
    return percentile(means, tail), percentile(means, 1 - tail)


@pytest.mark.parametrize("same_length", [1, 4, 5, 33])
@pytest.mark.parametrize("take_bytes", [8 << 20, 8 * 997 * 7, 1])
def test_series_drawn_together_have_each_their_own_plain_interval(
    same_length: int, take_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``bootstrap_cis`` takes the values of every series of one length in one go, in
    chunks of fewer rows where there are many such series or records (``TAKE_BYTES``:
    here 32 rows, 31 for 33 series, 7, and 1): each interval is still
    the one the plain definition gives the series alone, to the last bit. Mostly-zero
    series, as most records' reviewed metric equals the judge's."""
    from ragreview.core import agreement

    monkeypatch.setattr(agreement, "TAKE_BYTES", take_bytes)

    rng = random.Random(same_length)
    series = [
        [rng.uniform(-1, 1) if rng.random() < 0.15 else 0.0 for _ in range(997)]
        for _ in range(same_length)
    ]
    series += [[rng.uniform(-1, 1) for _ in range(40)], []]  # another length, and none
    got = agreement.bootstrap_cis(series, seed=3, resamples=301)
    assert got[-1] is None
    assert got[:-1] == [_plain_bootstrap_ci(s, 3, 301) for s in series[:-1]]
