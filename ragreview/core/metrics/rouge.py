"""ROUGE-L F-measure, identical to the ``rouge-score`` package's ``rougeL`` without stemming.

Implemented here because ``core`` is stdlib-only and ``rouge_score`` imports nltk.
Same tokenizer (lower-case, anything outside ``[a-z0-9]`` separates tokens), same
LCS and F-measure; tests check equality against ``rouge_score`` on many strings.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def lcs_length(a: list[str], b: list[str]) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, 1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_l(prediction: str, target: str) -> float:
    """rouge_score's ``RougeScorer(["rougeL"]).score(target, prediction).fmeasure``."""
    target_tokens = tokenize(target)
    prediction_tokens = tokenize(prediction)
    if not target_tokens or not prediction_tokens:
        return 0.0
    lcs = lcs_length(target_tokens, prediction_tokens)
    precision = lcs / len(prediction_tokens)
    recall = lcs / len(target_tokens)
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0
