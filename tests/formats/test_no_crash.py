"""Malformed values in any field give a located InputError, never an exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragreview import formats
from ragreview.core.errors import InputError
from ragreview.core.import_items import ImportItem

from .helpers import FIXTURES, HANDWRITTEN

SOURCES = [
    ("ragbench", HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl"),
    (
        "rgb",
        HANDWRITTEN / "rgb" / "prediction_en_fact_ModelX_temp0.7_noise0.0_passage5_correct0.0.json",
    ),
    ("mtrag", FIXTURES / "mtrag" / "responses-10.jsonl"),
    ("factscore", FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl"),
]
BAD_VALUES = [1, "x", [1], [[1, 2]], {"a": 1}, None, True]


@pytest.mark.parametrize(("fmt", "source"), SOURCES, ids=[f for f, _ in SOURCES])
def test_every_field_corrupted(fmt: str, source: Path, tmp_path: Path) -> None:
    row = json.loads(source.read_text(encoding="utf-8").splitlines()[0])
    lines = []
    for key in row:
        for bad in BAD_VALUES:
            lines.append(json.dumps({**row, key: bad}, ensure_ascii=False))
            value = row[key]
            if isinstance(value, list) and value:  # one level deeper
                lines.append(json.dumps({**row, key: [bad, *value[1:]]}, ensure_ascii=False))
    path = tmp_path / source.name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _fmt, stream = formats.read(path, fmt)
    for entry in stream:
        assert isinstance(entry, (ImportItem, InputError))
        if isinstance(entry, InputError):
            assert entry.line is not None and str(path) in str(entry)


def test_safe_corrupted(tmp_path: Path) -> None:
    doc = json.loads((HANDWRITTEN / "safe" / "2024-04-01-12-00-00-SAFE.json").read_text())
    ev = doc["per_prompt_data"][0]["side2_posthoc_eval_data"]
    for key in list(ev):
        for bad in BAD_VALUES:
            broken = json.loads(json.dumps(doc))
            broken["per_prompt_data"][0]["side2_posthoc_eval_data"][key] = bad
            path = tmp_path / "x-SAFE.json"
            path.write_text(json.dumps(broken))
            _fmt, stream = formats.read(path, "safe")
            for entry in stream:
                assert isinstance(entry, (ImportItem, InputError))
