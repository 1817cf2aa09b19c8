"""The native JSON Lines format and detection by content (docs/formats.md)."""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, field
from typing import Any

import pytest

from ragreview import formats
from ragreview.core.errors import InputError
from ragreview.core.import_items import ImportItem
from ragreview.core.record import Record, parse_record
from ragreview.formats import jsonio, native


@dataclass
class Exported:
    record: Record
    judge: dict[str, Any] = field(default_factory=dict)
    human: dict[str, Any] = field(default_factory=dict)
    source: str | None = None


def read_all(path):
    return list(native.read(path))


def test_demo_reads_and_writes_back_json_equal(demo_path) -> None:
    items = read_all(demo_path)
    assert all(isinstance(i, ImportItem) for i in items)
    assert [i.record.id for i in items] == ["covid-1", "covid-2", "markup-1", "bio-1", "rgb-1"]
    assert [i.position for i in items] == [1, 2, 3, 4, 5]
    assert items[0].judge["relevant"] == {"0a": True, "0b": True, "1a": True, "1b": True}
    assert items[0].human == {}
    out = io.StringIO()
    count = native.write((Exported(i.record, dict(i.judge), dict(i.human)) for i in items), out, {})
    assert count == 5
    original = [json.loads(line) for line in demo_path.read_text().splitlines()]
    assert [json.loads(line) for line in out.getvalue().splitlines()] == original


def test_unknown_fields_survive_and_labels_are_rebuilt(tmp_path) -> None:
    obj = {
        "id": "x",
        "custom": {"nested": [1, None, "é"]},
        "noise_rate": 0,
        "documents": [{"sentences": [["0a", "t"]], "extra": True}],
        "labels": {"judge": {"relevant": {"0a.": True}}, "human": {"relevant": {"0a": False}}},
    }
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(obj, ensure_ascii=False) + "\n", encoding="utf-8")
    (item,) = read_all(path)
    assert item.judge == {"relevant": {"0a": True}}  # the dotted key is resolved
    assert item.human == {"relevant": {"0a": False}}
    out = io.StringIO()
    native.write([Exported(item.record, dict(item.judge), dict(item.human))], out, {})
    back = json.loads(out.getvalue())
    assert back == {
        **obj,
        "labels": {"judge": {"relevant": {"0a": True}}, "human": {"relevant": {"0a": False}}},
    }


def test_record_without_labels_is_written_without_labels(tmp_path) -> None:
    out = io.StringIO()
    native.write([Exported(parse_record({"id": "a", "task": "rgb-noise"}))], out, {})
    assert json.loads(out.getvalue()) == {"id": "a", "task": "rgb-noise"}


def test_nan_in_the_input_is_read_and_written_as_null(tmp_path) -> None:
    """NaN (MT-RAG writes it through pandas) is not JSON: reading accepts it, and the
    native export writes the nearest JSON value, null."""
    path = tmp_path / "nan.jsonl"
    path.write_text('{"id": "a", "scores": {"stored.x": NaN}, "raw": NaN}\n', encoding="utf-8")
    (item,) = read_all(path)
    assert item.record.scores == {"stored.x": None}
    assert math.isnan(item.record.data["raw"])
    out = io.StringIO()
    native.write([Exported(item.record)], out, {})
    assert json.loads(out.getvalue()) == {"id": "a", "scores": {"stored.x": None}, "raw": None}


def test_huge_integers_survive() -> None:
    out = io.StringIO()
    native.write([Exported(parse_record({"id": "a", "big": 2**70}))], out, {})
    assert json.loads(out.getvalue()) == {"id": "a", "big": 2**70}


def test_errors_are_yielded_in_place_with_line_numbers(tmp_path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        '{"id": "a"}\n\n{"id": \n{"id": "a"}\n{"id": "b", "labels": {"judge": {"x": {}}}}\n'
        '{"id": "c"}\n',
        encoding="utf-8",
    )
    entries = read_all(path)
    kinds = [(e.line, e.field) if isinstance(e, InputError) else e.record.id for e in entries]
    assert kinds == ["a", (3, None), (4, "id"), (5, "labels.judge.x"), "c"]
    assert str(entries[1]).startswith(f"{path}:3: invalid JSON")


def test_sniff() -> None:
    assert native.sniff({"id": 1, "labels": {}})
    assert native.sniff({"documents": [{"sentences": []}]})
    assert not native.sniff({"documents": [{"text": "raw"}]})
    assert not native.sniff({"documents": []})
    assert not native.sniff({"query": "q", "prediction": "p"})


def test_detect(tmp_path) -> None:
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"id": "a", "question": "q"}\n', encoding="utf-8")
    assert formats.detect(plain) == "ragreview"
    broken_first = tmp_path / "broken.jsonl"
    broken_first.write_text('{"id": \n{"task": "x"}\n{"id": "b", "labels": {}}\n', encoding="utf-8")
    assert formats.detect(broken_first) == "ragreview"
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text('{"foo": 1}\n', encoding="utf-8")
    with pytest.raises(InputError, match="cannot tell the format"):
        formats.detect(unknown)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json at all\nnor this\n", encoding="utf-8")
    with pytest.raises(InputError, match="invalid JSON"):
        formats.detect(garbage)


def test_read_with_unknown_format(tmp_path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": "a"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="unknown format 'nope'"):
        formats.read(path, "nope")
    fmt, stream = formats.read(path)
    assert fmt == "ragreview" and [i.record.id for i in stream] == ["a"]


def test_read_text_errors(tmp_path) -> None:
    with pytest.raises(InputError, match="cannot read file"):
        jsonio.read_text(tmp_path / "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("  \n", encoding="utf-8")
    with pytest.raises(InputError, match="file is empty"):
        jsonio.read_text(empty)
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes('\ufeff{"id": "a"}\n'.encode())
    assert jsonio.read_text(bom) == '{"id": "a"}\n'


def test_json_document_with_error_line(tmp_path) -> None:
    path = tmp_path / "doc.json"
    path.write_text('[\n  {"id": 1},\n  {"id": 2,}\n]\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        jsonio.load_document(path)
    assert info.value.line == 3
