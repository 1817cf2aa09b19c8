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
    # left out: a raw control character in the id (no JSON string), an integer longer
    # than a line can hold; a negative integer is counted as its text
    (
        '{"id": "a\tb"}\n{"id": "c"}\n{"id": 123456789012345678901}\n{"id": -5}\n',
        Counter({"c": 1, "-5": 1}),
    ),
]


def test_ids_are_counted_in_the_order_they_first_come(tmp_path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id": "b"}\n{"id": "a"}\n{"id": "b"}\n{"id": 3}\n', encoding="utf-8")
    counts = leading_ids(path, None, "id")
    assert counts is not None and list(counts.items()) == [("b", 2), ("a", 1), ("3", 1)]


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


AFTER_SCALARS = [
    # MT-RAG's rows: task_id after conversation_id (json.dumps, compact, pandas' \/)
    ('{"conversation_id": "c1", "task_id": "c1::1", "x": []}\n', Counter({"c1::1": 1})),
    (
        '{"conversation_id":"c\\/1","turn":2,"ok":true,"n":null,"f":-1.5e3,"task_id":"t"}',
        Counter({"t": 1}),
    ),
    ('{"a": "x, \\"task_id\\": \\"no\\"", "task_id": "yes"}\n', Counter({"yes": 1})),
    ('{"a":"1","task_id":"t"}\n{"task_id":"t"}\n{"task_id":7,"b":1}\n', Counter({"t": 2, "7": 1})),
    # a task_id after a list, an object or NaN: no id pass (the records are held)
    ('{"contexts": [], "task_id": "t"}\n', None),
    ('{"m": {"task_id": "inner"}, "task_id": "t"}\n', None),
    ('{"v": NaN, "task_id": "t"}\n', None),
    ('{"conversation_id": "c1"}\n', None),  # no task_id at all
]


@pytest.mark.parametrize(("content", "expected"), AFTER_SCALARS)
def test_an_id_after_members_with_plain_values(tmp_path, content, expected) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(content.encode())
    assert leading_ids(path, None, "task_id", after_scalars=True) == expected
    assert leading_ids(path, content, "task_id", after_scalars=True) == expected
    assert leading_ids(path, None, "task_id") == (expected if content[2:9] == "task_id" else None)


def test_mtrag_rows_stream_with_their_task_ids(tmp_path) -> None:
    """An MT-RAG file of IBM's sample rows is read as a stream: the id pass counts every
    task_id (so no record waits for the last line), and the ids are the same."""
    from pathlib import Path

    from ragreview.formats import mtrag

    sample = Path(__file__).resolve().parents[2] / "fixtures" / "mtrag" / "responses-10.jsonl"
    ids = leading_ids(sample, None, "task_id", after_scalars=True)
    assert ids is not None and sum(ids.values()) == 10
    items = list(mtrag.read(sample))
    assert Counter(item.record.id for item in items) == ids
