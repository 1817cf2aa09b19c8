"""ROUGE-L F-measure, identical to the ``rouge-score`` package's ``rougeL`` without stemming.

Implemented here because ``rouge_score`` imports nltk (seconds at start). Same tokenizer
(lower-case, anything outside ``[a-z0-9]`` separates tokens), same LCS and F-measure;
tests check equality against ``rouge_score`` on every fixture row and random strings.

The LCS runs in C (rapidfuzz's ``LCSseq``, a bit-parallel LCS): the pure-Python dynamic
programme was 84% of an MT-RAG import (issue 27).
"""

from __future__ import annotations

import re
from itertools import count, repeat

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def numbered(tokens: list[str]) -> tuple[dict[str, int], list[int]]:
    """Each distinct token's number (its first place among the distinct ones), and the
    tokens as numbers: a text scored against many is numbered once."""
    numbers = dict(zip(dict.fromkeys(tokens), count()))
    return numbers, list(map(numbers.__getitem__, tokens))


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists."""
    return _lcs(numbered(a), b)


def _lcs(a: tuple[dict[str, int], list[int]], b: list[str]) -> int:
    """The LCS of numbered tokens ``a`` and tokens ``b``, in C (rapidfuzz's bit-parallel
    ``LCSseq``). rapidfuzz compares the elements of a list by their hash, and two
    different words with equal hashes would count as a match; distinct ints never do,
    so the result is exact. A token of ``b`` that ``a`` lacks matches nothing: all of
    them become -1, which no number of ``a`` is."""
    # Imported here: core loads no third-party module at import (tests/test_layering.py)
    # and most commands never compute a ROUGE-L.
    from rapidfuzz.distance import LCSseq

    numbers, a_ids = a
    return int(LCSseq.similarity(a_ids, list(map(numbers.get, b, repeat(-1)))))


def rouge_l(prediction: str, target: str) -> float:
    """rouge_score's ``RougeScorer(["rougeL"]).score(target, prediction).fmeasure``."""
    return rouge_l_numbered(tokenize(prediction), numbered(tokenize(target)))


def rouge_l_numbered(
    prediction_tokens: list[str], target: tuple[dict[str, int], list[int]]
) -> float:
    """``rouge_l`` of a tokenized prediction and a ``numbered`` target's tokens (a
    passage scored against many predictions is tokenized and numbered once)."""
    target_length = len(target[1])
    if not target_length or not prediction_tokens:
        return 0.0
    lcs = _lcs(target, prediction_tokens)
    precision = lcs / len(prediction_tokens)
    recall = lcs / target_length
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0
