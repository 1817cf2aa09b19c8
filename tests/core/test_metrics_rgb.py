"""RGB (docs/metrics.md): per-record labels, RGB's string rules and the dataset rates."""

from __future__ import annotations

import pytest

from ragreview.core.metrics import dataset_values, record_metrics, record_values
from ragreview.core.metrics.aggregate import totals_of
from ragreview.core.record import parse_record
from ragreview.core.rgb_rules import checkanswer, flags_error, is_rejection


def rec(task="rgb-noise", noise_rate=0.4, parts=(("Paris",), ("1999", "'99")), cf=(), text=""):
    obj = {
        "id": "r",
        "task": task,
        "noise_rate": noise_rate,
        "answer_parts": [list(p) for p in parts],
        "response": [["a", text]] if text else [],
    }
    if cf:
        obj["counterfactual"] = list(cf)
    return parse_record(obj)


def labels(rejected=False, parts=(True, True), detected=None):
    out = {"rejected": {"*": rejected}, "part_matched": {f"p{i}": v for i, v in enumerate(parts)}}
    if detected is not None:
        out["error_detected"] = {"*": detected}
    return out


@pytest.mark.parametrize(
    "rejected, parts, correct",
    [
        (False, (True, True), 1.0),
        (False, (True, False), 0.0),  # 0 in label
        (True, (True, True), 0.0),  # label [-1]: a rejected record is not correct
        (False, (False, False), 0.0),
    ],
)
def test_correct(rejected, parts, correct):
    out = record_metrics(rec(), labels(rejected, parts), {})
    assert out == {"rgb.rejected": float(rejected), "rgb.correct": correct}


def test_no_parts_is_not_correct():
    # RGB: label [] has no 1 in it.
    assert record_metrics(rec(parts=()), labels(parts=()), {})["rgb.correct"] == 0.0


def test_rejection_rate_at_noise_rate_1_reference_counts_correct_answers():
    records = [
        (rec(noise_rate=1.0), labels(rejected=True)),
        (rec(noise_rate=1.0), labels(rejected=False, parts=(True, True))),  # counts (all_rate)
        (rec(noise_rate=1.0), labels(rejected=False, parts=(True, False))),
        (rec(noise_rate=1.0), labels(rejected=False, parts=(False, False))),
    ]
    for variant, expected in (("reference", 0.5), ("simple", 0.25)):
        settings = {"rgb.variant": variant}
        totals = totals_of(record_values(r, lab, settings) for r, lab in records)
        out = dataset_values(totals, settings)
        assert out["rgb.rejection_rate"] == expected
        assert "rgb.accuracy" not in out  # no record below noise rate 1


def test_accuracy_per_noise_records():
    records = [
        (rec(noise_rate=0.2), labels()),
        (rec(noise_rate=0.2), labels(rejected=True)),  # a rejection counts as wrong
        (rec(noise_rate=0.8), labels(parts=(True, False))),
    ]
    totals = totals_of(record_values(r, lab, {}) for r, lab in records)
    out = dataset_values(totals, {})
    assert out["rgb.accuracy"] == pytest.approx(1 / 3)
    assert out["rgb.rejected"] == pytest.approx(1 / 3)


def cf_rec(text=""):
    return rec(task="rgb-counterfactual", noise_rate=0.0, cf=("London",), text=text)


def test_counterfactual_reference_rates_keep_rgb_asymmetries():
    records = [
        (cf_rec(), labels(detected=True)),  # detected, correct -> corrected
        (cf_rec(), labels(rejected=True, detected=True)),  # [-1]: 0 not in label -> corrected
        (cf_rec(), labels(parts=(True, False), detected=True)),  # detected, not corrected
        (cf_rec(), labels(detected=False)),
    ]
    totals = totals_of(record_values(r, lab, {}) for r, lab in records)
    out = dataset_values(totals, {"rgb.variant": "reference"})
    assert out["rgb.error_detection_rate"] == 0.75
    assert out["rgb.error_correction_rate"] == pytest.approx(2 / 3)
    per = record_metrics(*records[1], {})
    assert per["rgb.error_detected"] == 1.0 and per["rgb.error_corrected"] == 0.0


def test_counterfactual_nothing_detected_gives_correction_rate_0():
    records = [(cf_rec(), labels(detected=False)), (cf_rec(), labels(detected=False))]
    totals = totals_of(record_values(r, lab, {}) for r, lab in records)
    out = dataset_values(totals, {})
    assert out["rgb.error_detection_rate"] == 0.0
    assert out["rgb.error_correction_rate"] == 0.0


def test_counterfactual_simple_correction_excludes_repeating_the_fake_answer():
    settings = {"rgb.variant": "simple"}
    records = [
        (cf_rec("It is Paris, 1999."), labels(detected=False)),  # correct, not repeating
        (cf_rec("Paris 1999, not London"), labels(detected=True)),  # repeats counterfactual
        (cf_rec("Paris"), labels(parts=(True, False), detected=True)),  # not correct
    ]
    totals = totals_of(record_values(r, lab, settings) for r, lab in records)
    out = dataset_values(totals, settings)
    assert out["rgb.error_correction_rate"] == pytest.approx(1 / 3)
    assert out["rgb.error_detection_rate"] == pytest.approx(2 / 3)


def test_rgb_string_rules():
    assert checkanswer("The answer is PARIS in 1999", ["paris", ["2000", "1999"], "x"]) == [1, 1, 0]
    assert checkanswer("abc", "B") == [1]
    assert is_rejection("I can not answer because of the insufficient information in documents.")
    assert not is_rejection("Insufficient information.")  # case-sensitive, as RGB
    assert is_rejection("文档信息不足")
    assert flags_error("There are factual errors in the provided documents.")
    assert flags_error("文档中有事实性错误")
    assert not flags_error("Factual Errors")
