"""``line_writer.write_lines`` writes a stored record's line as the bytes it was read as,
straight to the export file's binary buffer, and the same text to a file that has none
(issue 27: decoding each line only to encode it again was a fifth of an export)."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from ragreview.formats.line_writer import write_lines

LINES = [
    '{"id": "a", "q": "caf\\u00e9 \\/ \u00e9\u201c"}',
    '{"id":"b","q":"\U0001f600\\r"}\r',  # a line's own \r stays
    '{"id": "c"}',
]


@dataclass
class _Item:  # a record as the writers see it, with or without its stored bytes
    source: str
    human: dict[str, Any] = field(default_factory=dict)
    judge: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Stored(_Item):
    source_bytes: bytes = b""


def _never(row: dict[str, Any], item: Any) -> None:
    raise AssertionError("no record changed")


def test_a_file_gets_the_bytes_after_what_was_written_before(tmp_path) -> None:
    path = tmp_path / "out.jsonl"
    items = [_Stored(line, source_bytes=line.encode()) for line in LINES]
    with path.open("w", encoding="utf-8", newline="") as out:
        out.write("first\n")  # text written before goes first
        assert write_lines(items, out, "test", _never) == 3
        out.write("last\n")
    assert path.read_bytes() == ("first\n" + "\n".join(LINES) + "\nlast\n").encode()


def test_a_text_stream_gets_the_same_text() -> None:
    out = io.StringIO()
    items = [_Item(line) for line in LINES]
    assert write_lines(items, out, "test", _never) == 3
    assert out.getvalue() == "\n".join(LINES) + "\n"
