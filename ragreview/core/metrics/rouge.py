"""ROUGE-L F-measure, identical to the ``rouge-score`` package's ``rougeL`` without stemming.

Implemented here because ``rouge_score`` imports nltk (seconds at start). Same tokenizer
(lower-case, anything outside ``[a-z0-9]`` separates tokens), same LCS and F-measure;
tests check equality against ``rouge_score`` on every fixture row and random strings.

The LCS runs in C (rapidfuzz's ``LCSseq``, a bit-parallel LCS): the pure-Python dynamic
programme was 84% of an MT-RAG import (issue 27).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from itertools import count, repeat
from typing import Any

_TOKEN = re.compile(r"[a-z0-9]+")
# Every ASCII byte but a-z and 0-9 to a space (upper case is lowered first): an ASCII
# text's tokens by one C translate and a split, a third of the regex's time.
TO_SPACE = bytes(c if _TOKEN.fullmatch(chr(c)) else 32 for c in range(256))


def tokenize(text: str) -> list[str]:
    """rouge_score's tokenizer without stemming: lower-case, anything outside
    ``[a-z0-9]`` separates tokens. What the regex finds, as the same strings: every
    character left that is not ASCII (after lower-casing, which can make ASCII letters:
    "K" -> "k") encoded as "?", which separates like the rest (the regex's search of a
    text that is not ASCII cost twenty times the translate)."""
    return text.lower().encode("ascii", "replace").translate(TO_SPACE).decode().split()


# Tokens as characters: rapidfuzz reads a str's code points directly, where the items of
# a list are hashed one by one on every call (two thirds of the LCS's time). Distinct
# characters never match, so the LCS of the characters is the LCS of the tokens. (Not
# the words' hashes as ints: two words of equal hash would match.)
_CHARACTERS = 0x110000  # chr's range


class _Numbering(dict[str, str]):
    """Every token met so far -> its character, shared by all texts (issue 27: numbering
    each pair's tokens afresh cost more than their LCS). Starts afresh past ``LIMIT``
    tokens (memory); ``generation`` counts the fresh starts."""

    LIMIT = 1 << 16
    generation = 0

    def __missing__(self, token: str) -> str:
        char = self[token] = chr(len(self))
        return char


NUMBERING = _Numbering()
# (held from a pair's ``start`` to its LCS: a thread starting the numbering afresh
# must not renumber another's texts between the two it compares)
LOCK = threading.Lock()


def start(tokens: int) -> bool:
    """Before a pair (or one text and its references) is numbered: whether the
    ``tokens`` they hold fit the characters left; past ``LIMIT`` the numbering starts
    afresh here first, never between two texts that are compared."""
    if len(NUMBERING) >= NUMBERING.LIMIT:
        NUMBERING.clear()
        NUMBERING.generation += 1
    return len(NUMBERING) + tokens < _CHARACTERS


def characters(tokens: list[str]) -> str:
    return "".join(map(NUMBERING.__getitem__, tokens))


class Reference:
    """A text scored against many others (an MT-RAG passage, against each turn of its
    conversation): tokenized once, its characters kept for the numbering's generation."""

    __slots__ = ("tokens", "_chars", "_generation")

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self._chars = ""
        self._generation = -1

    def characters(self) -> str:
        if self._generation != NUMBERING.generation:
            self._chars = characters(self.tokens)
            self._generation = NUMBERING.generation
        return self._chars


_SIMILARITY: list[Any] = []  # rapidfuzz's LCSseq.similarity, once imported


def lcs_characters(a: str, b: str) -> int:
    if not _SIMILARITY:
        # Imported here: core loads no third-party module at import
        # (tests/test_layering.py) and most commands never compute a ROUGE-L; kept
        # after (a ``from`` import of a package's module per pair cost a tenth of it)
        from rapidfuzz.distance import LCSseq

        _SIMILARITY.append(LCSseq.similarity)
    return int(_SIMILARITY[0](a, b))


# Per pair, for texts too many tokens for the shared numbering (only a hostile text):
# each distinct token of ``a`` its own character, every other token one more (beyond
# ``_CHARACTERS`` distinct tokens: ints, and -1).
Numbered = tuple[dict[str, Any], str | list[int], Any]  # (token -> item, text, other)


def numbered(tokens: list[str]) -> Numbered:
    """Each distinct token's character, the tokens as those characters, and a character
    none of them is, which every other token becomes."""
    distinct = dict.fromkeys(tokens)
    if len(distinct) < _CHARACTERS:
        chars = dict(zip(distinct, map(chr, count())))
        return chars, "".join(map(chars.__getitem__, tokens)), chr(len(chars))
    ints = dict(zip(distinct, count()))
    return ints, list(map(ints.__getitem__, tokens)), -1


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists."""
    with LOCK:
        if start(len(a) + len(b)):
            return lcs_characters(characters(a), characters(b))
    return _lcs(numbered(a), b)


def _lcs(a: Numbered, b: list[str]) -> int:
    """The LCS of ``numbered`` tokens ``a`` and tokens ``b``, in C."""
    from rapidfuzz.distance import LCSseq

    items, text, other = a
    b_items: Iterator[Any] = map(items.get, b, repeat(other))
    return int(LCSseq.similarity(text, "".join(b_items) if type(text) is str else list(b_items)))


def rouge_l(prediction: str, target: str) -> float:
    """rouge_score's ``RougeScorer(["rougeL"]).score(target, prediction).fmeasure``."""
    prediction_tokens, target_tokens = tokenize(prediction), tokenize(target)
    if not target_tokens or not prediction_tokens:
        return 0.0
    return f_measure(lcs_length(target_tokens, prediction_tokens), prediction_tokens, target_tokens)


def best_rouge_l(prediction_tokens: list[str], references: list[Reference]) -> float:
    """The largest ``rouge_l`` of a tokenized prediction against ``references``."""
    best = 0.0
    if not prediction_tokens:
        return best
    with LOCK:
        if start(len(prediction_tokens) + sum(len(r.tokens) for r in references)):
            chars = characters(prediction_tokens)
            for reference in references:
                if reference.tokens:
                    lcs = lcs_characters(reference.characters(), chars)
                    best = max(best, f_measure(lcs, prediction_tokens, reference.tokens))
            return best
    for reference in references:
        if reference.tokens:
            lcs = _lcs(numbered(reference.tokens), prediction_tokens)
            best = max(best, f_measure(lcs, prediction_tokens, reference.tokens))
    return best


def f_measure(lcs: int, prediction_tokens: list[str], target_tokens: list[str]) -> float:
    """rouge_score's ``_score_lcs`` F-measure from the LCS length."""
    precision = lcs / len(prediction_tokens)
    recall = lcs / len(target_tokens)
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0
