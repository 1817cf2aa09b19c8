"""RGB's string rules, case by case as ``evalue.py`` applies them."""

from __future__ import annotations

import pytest

from ragreview.core import rgb_rules


@pytest.mark.parametrize(
    ("prediction", "answer", "expected"),
    [
        ("It was in Tampa, Florida.", "Tampa, Florida", [1]),
        ("It was in TAMPA, florida.", "Tampa, Florida", [1]),  # both sides lower-cased
        ("It was in Tampa.", "Tampa, Florida", [0]),
        ("Released Jul 21, 2017.", [["July 21 2017", "Jul 21, 2017"]], [1]),  # any alternative
        ("张丹和张昊", ["张丹", "张昊"], [1, 1]),  # every part required
        ("只有张丹", ["张丹", "张昊"], [1, 0]),
        ("Nolan, July 21", ["Christopher Nolan", ["July 21", "21 July"]], [0, 1]),
    ],
)
def test_checkanswer(prediction: str, answer: object, expected: list[int]) -> None:
    assert rgb_rules.checkanswer(prediction, answer) == expected


@pytest.mark.parametrize(
    ("prediction", "rejected"),
    [
        (
            "I can not answer the question because of the insufficient information in documents.",
            True,
        ),
        ("Insufficient information in the documents.", False),  # case-sensitive, as in RGB
        ("文档信息不足，因此我无法基于提供的文档回答该问题。", True),
        ("The answer is 42.", False),
    ],
)
def test_rejection_phrase(prediction: str, rejected: bool) -> None:
    assert rgb_rules.is_rejection(prediction) is rejected
    assert (rgb_rules.label(prediction, "42") == [-1]) is rejected


def test_error_phrases_and_judge_texts() -> None:
    assert rgb_rules.flags_error("There are factual errors in the provided documents.")
    assert rgb_rules.flags_error("文档中存在事实性错误。")
    assert not rgb_rules.flags_error("There are Factual Errors.")
    assert rgb_rules.judge_says_not_addressed("No, the question is not addressed by the documents.")
    assert not rgb_rules.judge_says_not_addressed(
        "Yes, the question is addressed by the documents."
    )
    assert rgb_rules.judge_says_identified("Yes, the model has identified the factual errors.")
    assert not rgb_rules.judge_says_identified("NO, the model fail to identify the factual errors.")


def test_answer_parts() -> None:
    assert rgb_rules.answer_parts("A") == [["A"]]
    assert rgb_rules.answer_parts(["A", ["B", "b"]]) == [["A"], ["B", "b"]]
