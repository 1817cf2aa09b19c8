"""ROUGE-L F-measure, identical to the ``rouge-score`` package's ``rougeL`` without stemming.

Implemented here because ``rouge_score`` imports nltk (seconds at start). Same tokenizer
(lower-case, anything outside ``[a-z0-9]`` separates tokens), same LCS and F-measure;
tests check equality against ``rouge_score`` on every fixture row and random strings.

The LCS runs in C (rapidfuzz's ``LCSseq``, a bit-parallel LCS): the pure-Python dynamic
programme was 84% of an MT-RAG import (issue 27).
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists.

    Tokens become small ints first, one per distinct token: rapidfuzz compares the
    elements of a list by their hash, and two different words with equal hashes would
    count as a match; distinct ints never do, so the result is exact."""
    # Imported here: core loads no third-party module at import (tests/test_layering.py)
    # and most commands never compute a ROUGE-L.
    from rapidfuzz.distance import LCSseq

    ids: dict[str, int] = {}
    number = ids.setdefault  # a token's number: its first place among the distinct ones
    return int(
        LCSseq.similarity([number(t, len(ids)) for t in a], [number(t, len(ids)) for t in b])
    )


def rouge_l(prediction: str, target: str) -> float:
    """rouge_score's ``RougeScorer(["rougeL"]).score(target, prediction).fmeasure``."""
    return rouge_l_tokens(tokenize(prediction), tokenize(target))


def rouge_l_tokens(prediction_tokens: list[str], target_tokens: list[str]) -> float:
    """``rouge_l`` of texts already tokenized (a text scored against many keeps its
    tokens)."""
    if not target_tokens or not prediction_tokens:
        return 0.0
    lcs = lcs_length(target_tokens, prediction_tokens)
    precision = lcs / len(prediction_tokens)
    recall = lcs / len(target_tokens)
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0
