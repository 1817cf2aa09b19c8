"""Paired comparison of two judges (core.paired, docs/align.md): hand-computed point
values, the verdict rule, and the paired bootstrap against a plain numpy loop."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from ragreview.core.agreement import binary_stats_of_counts
from ragreview.services.paired import (
    BETTER,
    CANT_TELL,
    WORSE,
    compare_labels,
    compare_metrics,
    self_agreement,
    verdict,
)


def _counts(rows):
    tp, fp, fn, tn = (sum(r[i] for r in rows) for i in range(4))
    return Counter({(True, True): tp, (True, False): fp, (False, True): fn, (False, False): tn})


# 10 records, one item each: the base judge is right on 6, the candidate on 9
TRUTH = [True, True, True, True, True, False, False, False, False, False]
BASE = [True, True, False, False, True, False, True, True, False, False]
CAND = [True, True, True, True, True, False, False, False, False, True]


def _rows(judge):
    return [
        (int(j and t), int(j and not t), int(not j and t), int(not j and not t))
        for j, t in zip(judge, TRUTH)
    ]


def test_point_values_are_the_agreement_report_numbers():
    got = compare_labels({"supported": _rows(BASE)}, {"supported": _rows(CAND)}, 0, 500)
    block = got["supported"]
    base = binary_stats_of_counts(_counts(_rows(BASE)))
    cand = binary_stats_of_counts(_counts(_rows(CAND)))
    # by hand: base tp 3 fp 2 fn 2 tn 3 -> p_o .6, p_e .5, κ .2; TPR .6, TNR .6
    assert base["kappa"] == pytest.approx(0.2)
    # candidate tp 5 fp 1 fn 0 tn 4 -> p_o .9, p_e (6·5 + 4·5)/100 = .5, κ .8; TPR 1, TNR .8
    assert cand["kappa"] == pytest.approx(0.8)
    for stat in ("kappa", "tpr", "tnr"):
        assert block[stat]["base"] == pytest.approx(base[stat])
        assert block[stat]["candidate"] == pytest.approx(cand[stat])
        assert block[stat]["delta"] == pytest.approx(cand[stat] - base[stat])
    assert block["kappa"]["delta"] == pytest.approx(0.6)
    assert block["n"] == 10


def test_bootstrap_is_a_paired_record_resample_seeded():
    """The interval equals a plain loop: the same rng.integers draw for both runs."""
    resamples, seed = 300, 7
    got = compare_labels({"x": _rows(BASE)}, {"x": _rows(CAND)}, seed, resamples)["x"]["tpr"]
    a, b = np.array(_rows(BASE)), np.array(_rows(CAND))
    idx = np.random.default_rng(seed).integers(0, 10, size=(resamples, 10))
    deltas = []
    for row in idx:
        ca, cb = a[row].sum(axis=0), b[row].sum(axis=0)
        if ca[0] + ca[2] == 0:  # no positive drawn: TPR undefined, left out
            continue
        deltas.append(cb[0] / (cb[0] + cb[2]) - ca[0] / (ca[0] + ca[2]))
    assert got["resamples_used"] == len(deltas)
    assert got["ci_low"] == pytest.approx(np.percentile(deltas, 2.5))
    assert got["ci_high"] == pytest.approx(np.percentile(deltas, 97.5))
    again = compare_labels({"x": _rows(BASE)}, {"x": _rows(CAND)}, seed, resamples)
    assert again["x"]["tpr"] == got


def test_verdicts():
    assert verdict(0.1, 0.3) == BETTER
    assert verdict(-0.3, -0.1) == WORSE
    assert verdict(-0.1, 0.3) == CANT_TELL
    assert verdict(None, None) == CANT_TELL
    assert verdict(-0.3, -0.1, higher_is_better=False) == BETTER
    same = compare_labels({"x": _rows(BASE)}, {"x": _rows(BASE)}, 0, 200)["x"]["kappa"]
    assert (same["delta"], same["ci_low"], same["ci_high"]) == (0, 0, 0)
    assert same["verdict"] == CANT_TELL  # an interval of [0, 0] does not exclude 0


def test_undefined_stat_is_null_not_zero():
    everything_negative = [(0, 0, 0, 1)] * 5
    block = compare_labels({"x": everything_negative}, {"x": everything_negative}, 0, 50)["x"]
    assert block["tpr"]["base"] is None and block["tpr"]["delta"] is None
    assert block["tpr"]["verdict"] == CANT_TELL
    assert block["kappa"]["base"] is None  # one class throughout
    assert block["tnr"]["delta"] == 0


def test_metric_bias_difference():
    # base judge +0.2 too high on every record; candidate exact on every record
    rows = [(0.7, 0.5, 0.5), (0.4, 0.2, 0.2), (1.0, 0.8, 0.8), (0.2, 0.0, 0.0)] * 5
    got = compare_metrics({"m": rows}, 0, 400)["m"]
    assert got["n"] == 20
    assert got["base_bias"] == pytest.approx(0.2) and got["candidate_bias"] == pytest.approx(0)
    assert got["delta_abs_bias"] == pytest.approx(-0.2)
    assert got["ci_high"] == pytest.approx(-0.2) and got["verdict"] == BETTER
    assert compare_metrics({"m": []})["m"]["verdict"] == CANT_TELL


def test_self_agreement_kappa_and_interval():
    rows = _rows(BASE)  # run 2 read as the truth: κ .2 by hand (above)
    got = self_agreement({"x": rows}, 0, 300)["x"]
    assert got["kappa"] == pytest.approx(0.2) and got["n"] == 10
    assert got["ci_low"] < 0.2 < got["ci_high"]
