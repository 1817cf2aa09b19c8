"""core.rubric: stepping a declared human metric through its values, and the means the
review screen's panel shows (hand-computed)."""

from __future__ import annotations

import pytest

from ragreview.core.labels import LabelSpec
from ragreview.core.rubric import annotators_value, as_number, means, step

CHOICE = LabelSpec("faithfulness", "record", "choice", "rubric", "", choices=("1", "2", "3", "4"))
NUMBER = LabelSpec("win-rate", "record", "number", "rubric", "", bounds=(0.0, 100.0))
ENTRY = {"kind": "choice", "choices": ["1", "2", "3", "4"], "numeric": [1, 2, 3, 4]}


def test_choice_steps_in_declared_order_and_stops_at_either_end():
    assert step(CHOICE, None, up=True) == "1"
    assert step(CHOICE, None, up=False) == "4"
    assert step(CHOICE, "2", up=True) == "3"
    assert step(CHOICE, "2", up=False) == "1"
    assert step(CHOICE, "4", up=True) is None
    assert step(CHOICE, "1", up=False) is None


def test_number_steps_by_a_tenth_of_its_range_within_it():
    assert step(NUMBER, None, up=True) == 0
    assert step(NUMBER, None, up=False) == 100
    assert step(NUMBER, 33.33, up=True) == pytest.approx(43.33)
    assert step(NUMBER, 95, up=True) == 100  # clamped to the range
    assert step(NUMBER, 100, up=True) is None
    assert step(NUMBER, 0, up=False) is None
    free = LabelSpec("score", "record", "number", "rubric", "")
    assert step(free, None, up=True) == 0 and step(free, 2, up=False) == 1


def test_annotators_value_uses_the_metric_aggregator():
    # InspectorRAGet's majorityAggregator: 1 1 4 -> 1; 1 2 3 (all differ) -> Indeterminate
    assert annotators_value({**ENTRY, "aggregator": "majority"}, ["1", "1", "4"]) == 1.0
    assert annotators_value({**ENTRY, "aggregator": "majority"}, ["1", "2", "3"]) is None
    assert annotators_value({**ENTRY, "aggregator": "median"}, ["1", "4", "2", "3"]) == 2.0
    assert annotators_value({"kind": "number"}, [0.0, 100.0, 100.0]) == pytest.approx(200 / 3)
    assert annotators_value(ENTRY, []) is None


def test_numbers_and_means():
    assert as_number(ENTRY, "3") == 3.0 and as_number(ENTRY, None) is None
    assert as_number({"kind": "number"}, 66.67) == 66.67
    assert means([{"a": 1.0, "b": None}, {"a": 2.0, "b": None}]) == {"a": 1.5, "b": None}
