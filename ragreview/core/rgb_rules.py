"""RGB's own string rules (chen700564/RGB ``evalue.py`` and the judge scripts).

Pure functions, kept exactly as RGB applies them (the asymmetries included): the
rejection and error phrases are matched case-sensitively on the raw prediction, the
answer check lower-cases both sides.
"""

from __future__ import annotations

from typing import Any

REJECTION_PHRASES = ("信息不足", "insufficient information")
ERROR_PHRASES = ("事实性错误", "factual errors")

# What RGB's LLM-judge scripts look for in their ``evaluation`` text.
NOT_ADDRESSED = "not addressed"  # reject_evalue.py: the judge says the model rejected
IDENTIFIED = ("has identified", "Yes")  # fact_evalue.py: the model caught the error


def answer_parts(answer: Any) -> list[list[str]]:
    """RGB's ``answer`` as required parts, each a list of acceptable alternatives.

    A string is one part; in a list, a string element is a part with one alternative
    and a list element a part with several.
    """
    items = answer if isinstance(answer, list) else [answer]
    return [list(item) if isinstance(item, list) else [item] for item in items]


def checkanswer(prediction: str, ground_truth: Any) -> list[int]:
    """1/0 per answer part: any lower-cased alternative is a substring of the
    lower-cased prediction."""
    text = prediction.lower()
    return [int(any(alt.lower() in text for alt in part)) for part in answer_parts(ground_truth)]


def is_rejection(prediction: str) -> bool:
    return any(phrase in prediction for phrase in REJECTION_PHRASES)


def flags_error(prediction: str) -> bool:
    return any(phrase in prediction for phrase in ERROR_PHRASES)


def label(prediction: str, ground_truth: Any) -> list[int]:
    """RGB's ``label``: ``[-1]`` for a rejection, else ``checkanswer``."""
    if is_rejection(prediction):
        return [-1]
    return checkanswer(prediction, ground_truth)


def judge_says_not_addressed(evaluation: str) -> bool:
    return NOT_ADDRESSED in evaluation


def judge_says_identified(evaluation: str) -> bool:
    return any(phrase in evaluation for phrase in IDENTIFIED)


# Labels that judge the model's output: a record without one (an RGB data file, no
# prediction yet) has nothing they could be about.
JUDGES_THE_OUTPUT = ("rejected", "error_detected", "part_matched", "not_addressed", "identified")


def refusal(record: Any, name: str, judge: Any = None) -> str | None:
    """Why ``name`` cannot be set on ``record`` (None: it can). ``judge``: the record's
    judge layer; a judge that labelled the output had one to judge, even where the file
    keeps no text of it (a ragreview record with labels only)."""
    if name in JUDGES_THE_OUTPUT and not record.response:
        if judge and any(judge.get(n) for n in JUDGES_THE_OUTPUT):
            return None
        return f"no prediction: no output for {name} to judge"
    return None
