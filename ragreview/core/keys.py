"""Sentence and item keys (docs/architecture.md).

Document sentences are keyed by document index plus letters (``0a``, ``0b``, …),
response sentences by letters alone (``a``, ``b``, …). Letters are bijective base-26
like spreadsheet columns: ``z`` is followed by ``aa``. Keys that come with the input
are kept verbatim; these helpers only generate keys for inputs that have none.
"""

from __future__ import annotations


def letters(index: int) -> str:
    """0 -> 'a', 25 -> 'z', 26 -> 'aa', 701 -> 'zz', 702 -> 'aaa'."""
    if index < 0:
        raise ValueError(f"negative key index {index}")
    out = []
    n = index + 1
    while n:
        n, rem = divmod(n - 1, 26)
        out.append(chr(ord("a") + rem))
    return "".join(reversed(out))


def doc_key(doc_index: int, sentence_index: int) -> str:
    return f"{doc_index}{letters(sentence_index)}"


def response_key(sentence_index: int) -> str:
    return letters(sentence_index)


def fact_key(index: int) -> str:
    return f"f{index + 1}"


def statement_key(index: int) -> str:
    return f"s{index + 1}"


def reference_statement_key(index: int) -> str:
    return f"r{index + 1}"


def context_key(index: int) -> str:
    return f"c{index}"


def cell_key(item_key: str, chunk_index: int) -> str:
    """A claim x chunk cell (RAGChecker's retrieved2response / retrieved2answer): the
    claim's key and the chunk's context key, ``s1/c0``."""
    return f"{item_key}/{context_key(chunk_index)}"


def part_key(index: int) -> str:
    return f"p{index}"


def normalize_key(key: str) -> str:
    """A key as written in a label list: ``"0a."`` and ``" 0a "`` both mean ``0a``."""
    return key.strip().rstrip(".").strip()
