"""``leading_ids``: the id pass that lets line formats stream (formats.id_pass)."""

from __future__ import annotations

from collections import Counter

import pytest

from ragreview.formats.id_pass import leading_ids

CASES = [
    ('{"id": "a", "x": 1}\n{"id": "b"}\n', Counter({"a": 1, "b": 1})),
    ('\ufeff{"id": "a"}\n\n   \n{"id":"a","y":2}', Counter({"a": 2})),  # BOM, blanks, no final \n
    ('{"id": "a"}\r\n{"id": 7}\r\n', Counter({"a": 1, "7": 1})),
    ('{"id": "say \\"hi\\"", "x": 1}\n', Counter({'say "hi"': 1})),
    ('{"id": "caf\\u00e9"}\n', Counter({"café": 1})),
    ('{"id": "a"}\n{"x": 1, "id": "b"}\n', None),  # a line that does not lead with the id
    ('{"id": "a"}\n[1, 2]\n', None),
    ("", Counter()),
]


@pytest.mark.parametrize(("content", "expected"), CASES)
def test_ids_counted_from_the_file_and_from_text_alike(tmp_path, content, expected) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(content.encode())
    assert leading_ids(path, None, "id") == expected
    text = content.removeprefix("\ufeff")  # read_text drops the BOM
    assert leading_ids(path, text, "id") == expected


@pytest.mark.parametrize("block", [1, 7, 64])
def test_lines_longer_than_a_block_and_split_across_blocks(tmp_path, monkeypatch, block) -> None:
    from ragreview.formats import id_pass

    monkeypatch.setattr(id_pass, "ID_PASS_BLOCK", block)
    for content, expected in CASES:
        path = tmp_path / "rows.jsonl"
        path.write_bytes(content.encode())
        assert leading_ids(path, None, "id") == expected, content
