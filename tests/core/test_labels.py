"""Label catalogue, validation of labels and layers, and the judge/human merge."""

from __future__ import annotations

import pytest

from ragreview.core.errors import RecordError
from ragreview.core.labels import (
    CATALOGUE,
    check_label,
    check_layer,
    effective,
    parse_value_text,
    spec,
    value_of,
)
from ragreview.core.record import parse_record

RECORD = parse_record(
    {
        "id": "r1",
        "documents": [{"sentences": [["0a", "x"], ["0b", "y"]]}, {"sentences": [["1a", "z"]]}],
        "response": [["a", "A."], ["b", "B."]],
        "answer_parts": [["Tampa"], ["2021"]],
        "facts": [["f1", "fact", "a"]],
        "statements": [["s1", "st"]],
        "reference_statements": [["r1", "rs"]],
    }
)


def test_catalogue_matches_spec_table() -> None:
    assert list(CATALOGUE) == [
        "relevant",
        "utilized",
        "supported",
        "support_keys",
        "rejected",
        "part_matched",
        "error_detected",
        "not_addressed",
        "identified",
        "idk",
        "underspecified",
        "answerability",
        "rb_llm_rating",
        "fact",
        "statement",
        "attributed",
        "context_useful",
        "verdict",  # beyond docs/architecture.md: ragas MetricAnnotation verdicts (formats issue)
        "deepeval_claim",
        "deepeval_statement",
        "deepeval_context_statement",
        "deepeval_node",
        "deepeval_expected",
        "answer2response",
        "response2answer",
        "retrieved2response",
        "retrieved2answer",
    ]
    assert spec("relevant").default is False and spec("utilized").default is False
    assert spec("supported").default is None  # stored explicitly, never defaulted


@pytest.mark.parametrize(
    ("name", "target", "value", "expected"),
    [
        ("relevant", "0a", True, ("0a", True)),
        ("relevant", "0a.", 1, ("0a", True)),  # trailing dot; 0/1 accepted for booleans
        ("utilized", "1a", 0, ("1a", False)),
        ("supported", "b", False, ("b", False)),
        ("support_keys", "a", ["0a.", "1a", "general"], ("a", ["0a", "1a", "general"])),
        ("rejected", "*", True, ("*", True)),
        ("part_matched", "p1", True, ("p1", True)),
        ("error_detected", "*", False, ("*", False)),
        ("idk", "*", 0.5, ("*", 0.5)),
        ("idk", "*", 1, ("*", 1)),
        ("underspecified", "*", 0, ("*", 0)),
        ("answerability", "*", "unanswerable", ("*", "UNANSWERABLE")),
        ("rb_llm_rating", "*", 7, ("*", 7)),
        ("fact", "f1", "NS", ("f1", "NS")),
        ("fact", "f1", "ir", ("f1", "IR")),
        ("statement", "s1", True, ("s1", True)),
        ("attributed", "r1", False, ("r1", False)),
        ("context_useful", "c1", True, ("c1", True)),
        ("answer2response", "s1", "Neutral", ("s1", "Neutral")),
        ("response2answer", "r1", "Contradiction", ("r1", "Contradiction")),
        ("retrieved2response", "s1/c1", "Entailment", ("s1/c1", "Entailment")),
        ("retrieved2answer", "r1/c0", "Neutral", ("r1/c0", "Neutral")),
    ],
)
def test_valid_labels(name: str, target: str, value: object, expected: tuple) -> None:
    assert check_label(RECORD, name, target, value) == expected


def test_unknown_label_name() -> None:
    with pytest.raises(RecordError) as info:
        check_label(RECORD, "relevance", "0a", True)
    assert info.value.field == "name" and "relevance" in info.value.message


@pytest.mark.parametrize(
    ("name", "target"),
    [
        ("relevant", "2a"),
        ("relevant", "a"),  # a response key is not a document sentence
        ("supported", "0a"),
        ("supported", "c"),
        ("rejected", "0a"),
        ("part_matched", "p2"),
        ("fact", "f2"),
        ("statement", "s2"),
        ("attributed", "r2"),
        ("context_useful", "c2"),
        ("retrieved2response", "s1/c2"),  # the record has chunks c0 and c1
        ("retrieved2answer", "s1/c0"),  # a response claim is not a ground-truth claim
    ],
)
def test_target_the_record_lacks(name: str, target: str) -> None:
    with pytest.raises(RecordError) as info:
        check_label(RECORD, name, target, True)
    assert info.value.field == "target"
    assert repr(target) in info.value.message and "'r1'" in info.value.message


@pytest.mark.parametrize(
    ("name", "target", "value"),
    [
        ("relevant", "0a", "yes"),
        ("relevant", "0a", 0.5),
        ("relevant", "0a", None),
        ("support_keys", "a", "0a"),
        ("support_keys", "a", [1]),
        ("support_keys", "a", ["9z"]),  # a key the record lacks
        ("idk", "*", 0.3),
        ("idk", "*", True),  # a bool is not the verdict 1
        ("answerability", "*", "MAYBE"),
        ("rb_llm_rating", "*", "7"),
        ("rb_llm_rating", "*", True),
        ("rb_llm_rating", "*", 11),  # humans are held to 1-10
        ("rb_llm_rating", "*", 0),
        ("fact", "f1", "supported"),
        ("fact", "f1", True),
        ("answer2response", "s1", "Supported"),
        ("retrieved2answer", "r1/c0", True),
    ],
)
def test_value_of_wrong_type(name: str, target: str, value: object) -> None:
    with pytest.raises(RecordError) as info:
        check_label(RECORD, name, target, value)
    assert info.value.field == "value"


def test_judge_rating_out_of_range_is_kept() -> None:
    """Reference metrics define what an out-of-range judge rating means (0.5)."""
    assert check_label(RECORD, "rb_llm_rating", "*", 0, human=False) == ("*", 0)


def test_check_layer_resolves_dotted_keys() -> None:
    layer = {"relevant": {"0a.": True, "1a": False}, "support_keys": {"a.": ["0b."]}}
    assert check_layer(RECORD, layer, "labels.judge") == {
        "relevant": {"0a": True, "1a": False},
        "support_keys": {"a": ["0b"]},
    }
    assert check_layer(RECORD, None, "labels.judge") == {}


@pytest.mark.parametrize(
    ("layer", "field"),
    [
        ([], "labels.human"),
        ({"relevant": ["0a"]}, "labels.human.relevant"),
        ({"relevance": {"0a": True}}, "labels.human.relevance"),
        ({"relevant": {"7q": True}}, "labels.human.relevant.7q"),
        ({"relevant": {"0a": "yes"}}, "labels.human.relevant.0a"),
    ],
)
def test_check_layer_errors_name_the_field(layer: object, field: str) -> None:
    with pytest.raises(RecordError) as info:
        check_layer(RECORD, layer, "labels.human", human=True)
    assert info.value.field == field


def test_effective_is_human_over_judge_without_mutating_either() -> None:
    judge = {"relevant": {"0a": True, "0b": True}, "supported": {"a": True}}
    human = {"relevant": {"0b": False}, "fact": {"f1": "NS"}}
    merged = effective(judge, human)
    assert merged == {
        "relevant": {"0a": True, "0b": False},
        "supported": {"a": True},
        "fact": {"f1": "NS"},
    }
    assert judge == {"relevant": {"0a": True, "0b": True}, "supported": {"a": True}}
    assert human == {"relevant": {"0b": False}, "fact": {"f1": "NS"}}
    merged["relevant"]["0a"] = False
    assert judge["relevant"]["0a"] is True
    assert effective({}, {}) == {}
    assert effective(judge, {}) == judge


def test_value_of_uses_catalogue_default_when_absent() -> None:
    layer = {"relevant": {"0a": True}}
    assert value_of(layer, "relevant", "0a") is True
    assert value_of(layer, "relevant", "0b") is False
    assert value_of(layer, "utilized", "0a") is False
    assert value_of(layer, "supported", "a") is None
    assert value_of(layer, "rejected") is None


def test_cycle() -> None:
    assert spec("relevant").cycle(True) is False
    assert spec("relevant").cycle(None) is True
    assert spec("fact").cycle("S") == "NS"
    assert spec("fact").cycle("IR") == "S"
    assert spec("fact").cycle(None) == "S"
    assert spec("idk").cycle(0.5) == 1
    with pytest.raises(ValueError):
        spec("support_keys").cycle([])


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("0.5", 0.5),
        ('"NS"', "NS"),
        ("NS", "NS"),
        ('["0a","0b"]', ["0a", "0b"]),
        ("UNANSWERABLE", "UNANSWERABLE"),
    ],
)
def test_parse_value_text(text: str, value: object) -> None:
    assert parse_value_text(text) == value
