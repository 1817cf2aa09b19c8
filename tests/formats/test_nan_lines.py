"""JSON lines with NaN cells (pandas' to_json, MT-RAG's sample data) parsed by orjson
(json_limits.loads_nan_fields, issue 27) give exactly what json.loads gives, or are
left to it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ragreview.formats import jsonio
from ragreview.formats.json_limits import big_int, loads_nan_fields

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures"


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types, NaN equal to NaN, keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _check(line: bytes) -> None:
    """The fast parse equals json's wherever it gives one."""
    fast = loads_nan_fields(line)
    if fast is not None:
        assert _same(fast, json.loads(line, parse_int=big_int)), line


def test_every_fixture_line_with_nan_parses_fast_and_alike() -> None:
    lines = [
        line
        for folder in (REPO / "fixtures" / "mtrag", SHARED / "mtrag")
        for path in (sorted(folder.glob("*.jsonl")) if folder.is_dir() else [])
        for line in path.read_bytes().splitlines()
        if b"NaN" in line
    ]
    assert len(lines) >= 10  # responses-10.jsonl: four NaN cells a row
    for line in lines:
        fast = loads_nan_fields(line)
        assert fast is not None  # (the case it is for: each NaN a field of the row)
        assert _same(fast, json.loads(line))
        nans = [v for v in fast.values() if isinstance(v, float) and math.isnan(v)]
        assert nans and all(v is json.loads("NaN") for v in nans)


def test_a_nan_anywhere_else_is_left_to_json() -> None:
    for line in (
        b'{"a": NaN, "b": "not NaN here"}',  # inside a string
        b'{"NaN": NaN}',  # inside a key
        b'{"a": [NaN]}',  # nested
        b'{"a": {"b": NaN}}',
        b"[NaN]",
        b"NaN",
        b'{"a": NaN, "b": "\\u0000"}',  # the line writes the mark itself
        b'{"a": -NaN}',
        b'{"a": NaNa}',
        b'{"a": Infinity, "b": NaN}',
        b'{"a": NaN, "b": -9223372036854775809}',  # (orjson: a float; json: an int)
        b'{"a": NaN, "b": "\\ud800"}',  # a lone surrogate, which orjson refuses
    ):
        assert loads_nan_fields(line) is None, line


def test_repeated_keys_and_extreme_floats_parse_alike() -> None:
    assert loads_nan_fields(b'{"a": NaN, "b": 3, "a": 2}') is None  # (a NaN overwritten)
    assert loads_nan_fields(b'{"a": 1, "b": [2, 3]}') is None  # (no NaN: orjson alone)
    for line in (
        b'{"a": 1, "b": NaN, "a": NaN}',
        b'{"a": NaN, "b": 1.5e-400, "c": 1e308, "d": -0.0, "e": 922337203685477580}',
    ):
        assert loads_nan_fields(line) is not None
        _check(line)


def test_the_reader_gives_json_s_values(tmp_path) -> None:
    path = tmp_path / "rows.jsonl"
    rows = [b'{"id": 1, "x": NaN, "y": "NaN"}', b'{"id": 2, "x": NaN, "t": [1.5, NaN]}']
    path.write_bytes(b"\n".join([*rows, b'{"id": 3, "x": NaN}']) + b"\n")
    values = [value for _n, _line, value, _raw in jsonio.iter_lines_raw(path)]
    expected = [json.loads(r) for r in [*rows, b'{"id": 3, "x": NaN}']]
    assert all(_same(a, b) for a, b in zip(values, expected, strict=True))


JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
NAN = "\x00nan\x00"  # placed by the strategy, written as a bare NaN


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["NaN", "a", "b NaN", "task_id", "x\\u0000"]) | st.text(max_size=5),
        JSON_VALUE | st.just(NAN) | st.sampled_from(["NaN", "xNaNx", "\x00", "a\\u0000"]),
        max_size=6,
    ),
    st.sampled_from([{}, {"separators": (",", ":")}, {"ensure_ascii": False}]),
)
def test_random_rows_parse_alike(row: dict, style: dict) -> None:
    line = json.dumps(row, **style).replace(json.dumps(NAN), "NaN").encode()
    _check(line)
