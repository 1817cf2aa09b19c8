"""The pieces under hostile-input handling: limits on parsed JSON and the locator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragreview.core.errors import InputError
from ragreview.formats.json_limits import TOO_DEEP, finite_only, non_finite
from ragreview.formats.jsonio import load_document, parse_json
from ragreview.formats.locator import Locator, split_path


def test_split_path() -> None:
    assert split_path("per_prompt_data[3].side2.checked_statements[0].annotation") == [
        "per_prompt_data",
        3,
        "side2",
        "checked_statements",
        0,
        "annotation",
    ]
    assert split_path("[2].x") == [2, "x"]


def test_locator_follows_paths_through_strings_that_look_like_json() -> None:
    doc = {"a": ['x]"{,:', {"b": [1, {"c": "q"}]}], "d": [[], {}, {"e": [[[1]]]}]}
    text = json.dumps(doc, indent=2)
    lines = text.splitlines()
    locate = Locator(text).line
    assert lines[locate("a[1].b[1].c") - 1].strip() == '"c": "q"'
    assert lines[locate("d[1]") - 1].strip() == "{},"
    assert lines[locate("d[2].e[0][0][0]") - 1].strip() == "1"
    # a path that goes further than the document: its deepest existing part
    assert locate("d[2].e.nope") == locate("d[2].e")


def test_parse_limits_are_value_errors() -> None:
    with pytest.raises(ValueError, match="nested more than 1024"):
        parse_json("[" * 5000 + "]" * 5000)
    assert non_finite(parse_json('{"a": [1, ' + "9" * 5000 + "]}")) == (
        "a[1]",
        "integer of more than 4300 digits",
    )
    assert non_finite(parse_json('{"a": {"b": -Infinity}}'))[0] == "a.b"  # type: ignore[index]
    assert non_finite(parse_json('{"a": 1e400}'))[0] == "a"  # type: ignore[index]
    assert non_finite(parse_json('{"a": [1.5, "NaN"]}')) is None


def test_a_document_nested_too_deep_in_one_place_still_parses(tmp_path: Path) -> None:
    text = '{\n  "ok": 1,\n  "bad": ' + "[\n" * 2000 + "]" * 2000 + ',\n  "after": 2\n}\n'
    doc = load_document(tmp_path / "x.json", text)
    assert doc["ok"] == 1 and doc["after"] == 2
    where, reason = non_finite(doc)  # type: ignore[misc]
    assert where.startswith("bad[0]") and reason == TOO_DEEP
    # lines are where they were: "after" is still found on its own line
    assert text.splitlines()[Locator(text).line("after") - 1].strip() == '"after": 2'
    assert non_finite(finite_only(doc)) is None  # (the part cut out is null)


def test_a_broken_document_is_one_located_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_document(tmp_path / "x.json", '{\n  "a": 1,\n  "b": tru\n}\n')
    assert caught.value.line == 3
