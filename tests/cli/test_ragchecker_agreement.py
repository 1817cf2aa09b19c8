"""``agreement``, ``queue`` and the estimate on RAGChecker records, as on every family:
a few overrides of RAGChecker's own example, the counts worked out by hand from its
labels (fixtures/ragchecker/checking_outputs.json)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.formats.helpers import FIXTURES, run

SOURCE = FIXTURES / "ragchecker" / "checking_outputs.json"
OVERRIDES = (
    ("0", "answer2response", "s1", "Entailment"),  # judge Neutral
    ("1", "response2answer", "r3", "Entailment"),  # judge Contradiction
    ("1", "retrieved2answer", "r5/c0", "Entailment"),  # judge Neutral
)


@pytest.fixture()
def reviewed(tmp_path: Path) -> Path:
    path = tmp_path / SOURCE.name
    shutil.copy(SOURCE, path)
    for rid, name, target, value in OVERRIDES:
        assert run("label", path, rid, name, target, value).exit_code == 0
    for rid in ("0", "1"):
        assert run("mark", path, rid, "--reviewed").exit_code == 0
    return path


def test_agreement_per_label_and_per_metric(reviewed: Path) -> None:
    result = run("agreement", reviewed, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    labels = report["labels"]
    # items: one per claim (11 + 5 response, 22 + 8 ground-truth claims), one per claim x
    # chunk (11 x 4 + 5 x 3, 22 x 4 + 8 x 3); positive = Entailment (RAGChecker's to_bool)
    assert labels["answer2response"]["n"] == 16
    assert labels["answer2response"]["confusion"] == {"tp": 12, "fp": 0, "fn": 1, "tn": 3}
    assert labels["response2answer"]["confusion"] == {"tp": 17, "fp": 0, "fn": 1, "tn": 12}
    assert labels["retrieved2response"]["n"] == 59
    assert labels["retrieved2response"]["confusion"] == {"tp": 14, "fp": 0, "fn": 0, "tn": 45}
    assert labels["retrieved2answer"]["confusion"] == {"tp": 21, "fp": 0, "fn": 1, "tn": 90}
    # three values: the full matrix (judge value -> reviewer value -> count)
    matrix = report["multiclass"]["response2answer"]["matrix"]
    assert matrix["Contradiction"] == {"Entailment": 1, "Contradiction": 1}
    metrics = report["metrics"]
    precision = metrics["ragchecker.precision"]
    assert precision["n"] == 2
    assert precision["judge_mean"] == pytest.approx((8 / 11 + 4 / 5) / 2)
    assert precision["effective_mean"] == pytest.approx((9 / 11 + 4 / 5) / 2)
    assert precision["bias"] == pytest.approx(-1 / 22)
    recall = metrics["ragchecker.recall"]  # result 1: 6/8 -> 7/8
    assert recall["effective_mean"] == pytest.approx((11 / 22 + 7 / 8) / 2)
    utilization = metrics["ragchecker.context_utilization"]  # result 1: 6/8 -> 7/8
    assert utilization["effective_mean"] == pytest.approx((1 + 7 / 8) / 2)
    assert metrics["ragchecker.faithfulness"]["bias"] == 0.0


def test_queue_and_estimate(reviewed: Path) -> None:
    drawn = run("queue", reviewed, "--n", "2", "--strategy", "impact")
    assert drawn.exit_code == 0, drawn.output
    assert sorted(drawn.output.split()[:2]) == ["0", "1"]
    result = run("metrics", reviewed, "--json")
    estimate = json.loads(result.output.splitlines()[0])["estimate"]["metrics"]
    # every record drawn and reviewed: the estimate is the reviewed mean
    assert estimate["ragchecker.precision"]["n_used"] == 2
    assert estimate["ragchecker.precision"]["estimate"] == pytest.approx((9 / 11 + 4 / 5) / 2)
