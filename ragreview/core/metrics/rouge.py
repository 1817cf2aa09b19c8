"""ROUGE-L F-measure, identical to the ``rouge-score`` package's ``rougeL`` without stemming.

Implemented here because ``rouge_score`` imports nltk (seconds at start). Same tokenizer
(lower-case, anything outside ``[a-z0-9]`` separates tokens), same LCS and F-measure;
tests check equality against ``rouge_score`` on every fixture row and random strings.

The LCS runs in C (rapidfuzz's ``LCSseq``, a bit-parallel LCS): the pure-Python dynamic
programme was 84% of an MT-RAG import (issue 27).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import count, repeat
from typing import Any

_TOKEN = re.compile(r"[a-z0-9]+")
# Every ASCII byte but a-z and 0-9 to a space (upper case is lowered first): an ASCII
# text's tokens by one C translate and a split, a third of the regex's time.
_TO_SPACE = bytes(c if _TOKEN.fullmatch(chr(c)) else 32 for c in range(256))


def tokenize(text: str) -> list[str]:
    """rouge_score's tokenizer without stemming: lower-case, anything outside
    ``[a-z0-9]`` separates tokens."""
    if text.isascii():  # (what the regex finds, as the same strings)
        return text.lower().encode().translate(_TO_SPACE).decode().split()
    return _TOKEN.findall(text.lower())


# A text's tokens as characters, one per distinct token (in order of first use):
# rapidfuzz reads a str's code points directly, where the items of a list are hashed
# one by one on every call (two thirds of the LCS's time, and a passage is scored
# against every turn of its conversation).
Numbered = tuple[dict[str, Any], str | list[int], Any]  # (token -> item, text, other)
_CHARACTERS = 0x110000  # chr's range: only a hostile text has more distinct tokens


def numbered(tokens: list[str]) -> Numbered:
    """Each distinct token's character, the tokens as those characters, and a character
    none of them is, which every other token becomes: a text scored against many is
    numbered once. Distinct characters never match, so the LCS is exact. (Beyond
    ``_CHARACTERS`` distinct tokens: ints, and -1. Not the words themselves: rapidfuzz
    compares a list's items by their hash, and two words of equal hash would match.)"""
    distinct = dict.fromkeys(tokens)
    if len(distinct) < _CHARACTERS:
        chars = dict(zip(distinct, map(chr, count())))
        return chars, "".join(map(chars.__getitem__, tokens)), chr(len(chars))
    ints = dict(zip(distinct, count()))
    return ints, list(map(ints.__getitem__, tokens)), -1


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists."""
    return _lcs(numbered(a), b)


def _lcs(a: Numbered, b: list[str]) -> int:
    """The LCS of ``numbered`` tokens ``a`` and tokens ``b``, in C (rapidfuzz's
    bit-parallel ``LCSseq``)."""
    # Imported here: core loads no third-party module at import (tests/test_layering.py)
    # and most commands never compute a ROUGE-L.
    from rapidfuzz.distance import LCSseq

    items, text, other = a
    b_items: Iterator[Any] = map(items.get, b, repeat(other))
    return int(LCSseq.similarity(text, "".join(b_items) if type(text) is str else list(b_items)))


def rouge_l(prediction: str, target: str) -> float:
    """rouge_score's ``RougeScorer(["rougeL"]).score(target, prediction).fmeasure``."""
    return rouge_l_numbered(tokenize(prediction), numbered(tokenize(target)))


def rouge_l_numbered(prediction_tokens: list[str], target: Numbered) -> float:
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
