"""Every fixture imports strictly, with one record per source record, and exports back
JSON-equal (docs/formats.md round trip)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragreview import formats
from ragreview.core.errors import InputWarning
from ragreview.core.import_items import ImportItem
from ragreview.store import open_database
from ragreview.store import records as store_records

from .helpers import FIXTURES, HANDWRITTEN, SHARED_RGB, canonical, load_values, run

REPO_FILES = [
    ("factscore", FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl"),
    ("factscore", FIXTURES / "factscore" / "factscore_labeled_InstructGPT.jsonl"),
    ("mtrag", FIXTURES / "mtrag" / "responses-10.jsonl"),
    ("mtrag", FIXTURES / "mtrag" / "taskb_input.jsonl"),
    ("mtrag", FIXTURES / "mtrag" / "taskac_input.jsonl"),
    ("ragas", FIXTURES / "ragas" / "annotated_data.json"),
    ("ragas", FIXTURES / "ragas" / "edited_chain_runs.json"),
    ("ragbench", HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl"),
    ("safe", HANDWRITTEN / "safe" / "2024-04-01-12-00-00-SAFE.json"),
    *[("rgb", p) for p in sorted((HANDWRITTEN / "rgb").glob("*.json"))],
    ("ragreview", FIXTURES / "demo.jsonl"),
]
SHARED_FILES = [("rgb", SHARED_RGB / "en_fact.json"), ("rgb", SHARED_RGB / "zh_int.json")]
needs_shared = pytest.mark.skipif(
    not SHARED_RGB.is_dir(), reason="RGB data is not redistributable: needs ../shared/fixtures/rgb"
)
CASES = [pytest.param(f, p, id=p.name) for f, p in REPO_FILES] + [
    pytest.param(f, p, id=p.name, marks=needs_shared) for f, p in SHARED_FILES
]


def expected_count(fmt: str, path: Path) -> int:
    """Records in the file, counted without our readers."""
    values = load_values(path)
    if fmt == "safe":
        (doc,) = values
        return sum(
            isinstance(p.get(f"side{n}_posthoc_eval_data"), dict)
            for p in doc["per_prompt_data"]
            for n in (1, 2)
        )
    if fmt == "ragas" and len(values) == 1 and isinstance(values[0], dict):
        return sum(len(samples) for samples in values[0].values())
    return len(values)


@pytest.mark.parametrize(("fmt", "path"), CASES)
def test_detected(fmt: str, path: Path) -> None:
    assert formats.detect(path) == fmt


@pytest.mark.parametrize(("fmt", "path"), CASES)
def test_imports_strict_and_round_trips(fmt: str, path: Path, tmp_path: Path) -> None:
    db_path = tmp_path / "review.db"
    result = run("import", path, "--db", db_path, "--strict")
    assert result.exit_code == 0, result.output
    assert "error" not in result.output

    db = open_database(db_path)
    (dataset,) = store_records.datasets(db)
    assert dataset["format"] == fmt
    assert sum(store_records.counts(db, dataset["name"]).values()) == expected_count(fmt, path)

    out = tmp_path / f"out{path.suffix}"
    result = run("export", db_path, "--out", out, "--as", "source")
    assert result.exit_code == 0, result.output
    assert canonical(load_values(out)) == canonical(load_values(path))


@pytest.mark.parametrize(("fmt", "path"), CASES)
def test_records_keep_no_source_in_data(fmt: str, path: Path, tmp_path: Path) -> None:
    db_path = tmp_path / "review.db"
    run("import", path, "--db", db_path)
    db = open_database(db_path)
    for item in store_records.iterate(db):
        if fmt != "ragreview":
            assert "source" not in item.record.data
            assert item.source is not None
            json.loads(item.source)  # the stored source is the source record's JSON


def test_ids_follow_the_source(tmp_path: Path) -> None:
    cases = {
        HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl": "covidqa-17",
        FIXTURES / "mtrag" / "responses-10.jsonl": "dd6b6ffd177f2b311abe676261279d2f::1",
        FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl": "Lanny Flaherty",
        HANDWRITTEN / "safe" / "2024-04-01-12-00-00-SAFE.json": "0",
        FIXTURES / "ragas" / "annotated_data.json": "1",  # no ids: the record number
    }
    for path, first_id in cases.items():
        _fmt, items = formats.read(path)
        first = next(iter(items))
        assert not isinstance(first, Exception), first
        assert first.record.id == first_id


def test_repeated_ids_become_record_numbers(tmp_path: Path) -> None:
    source = (HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in source]
    rows[2]["id"] = rows[0]["id"]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _fmt, stream = formats.read(path)
    entries = list(stream)
    ids = [i.record.id for i in entries if isinstance(i, ImportItem)]
    assert ids == ["1", "covidqa-18", "3", "cuad-5"]
    # never silent: the repeat is reported at its second line, naming the first
    warnings = [str(e) for e in entries if isinstance(e, InputWarning)]
    assert len(warnings) == 1 and warnings[0].startswith(f"{path}:3: id: ")
    assert "first on line 1" in warnings[0] and "'1'" in warnings[0] and "'3'" in warnings[0]
