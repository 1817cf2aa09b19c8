"""Sentence and item keys (docs/architecture.md): bijective base-26 letters."""

from __future__ import annotations

import pytest

from ragreview.core import keys


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (0, "a"),
        (1, "b"),
        (25, "z"),
        (26, "aa"),
        (27, "ab"),
        (51, "az"),
        (52, "ba"),
        (701, "zz"),
        (702, "aaa"),
        (18277, "zzz"),
        (18278, "aaaa"),
    ],
)
def test_letters_are_bijective_base_26(index: int, expected: str) -> None:
    assert keys.letters(index) == expected


def test_letters_are_distinct_and_ordered_like_spreadsheet_columns() -> None:
    names = [keys.letters(i) for i in range(20_000)]
    assert len(set(names)) == len(names)
    assert names == sorted(names, key=lambda s: (len(s), s))


def test_negative_index_is_refused() -> None:
    with pytest.raises(ValueError):
        keys.letters(-1)


def test_key_kinds() -> None:
    assert keys.doc_key(0, 0) == "0a"
    assert keys.doc_key(12, 26) == "12aa"
    assert keys.response_key(2) == "c"
    assert [keys.fact_key(0), keys.statement_key(1), keys.reference_statement_key(2)] == [
        "f1",
        "s2",
        "r3",
    ]
    assert keys.context_key(0) == "c0" and keys.part_key(3) == "p3"


@pytest.mark.parametrize(
    ("written", "key"), [("0a.", "0a"), (" 0a ", "0a"), ("0a", "0a"), ("b.", "b"), ("1c. ", "1c")]
)
def test_normalize_key(written: str, key: str) -> None:
    assert keys.normalize_key(written) == key
