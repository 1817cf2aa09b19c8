"""Hostile input files, point by point (issue 13): one clear located line per bad
record, the other records import, nothing crashes, nothing is silently lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragreview import formats
from ragreview.core.errors import InputError, InputWarning
from ragreview.core.import_items import ImportItem
from ragreview.formats.common import fallback_id
from ragreview.store import open_database
from ragreview.store import records as store_records

from .helpers import FIXTURES, HANDWRITTEN, run

RGB = HANDWRITTEN / "rgb" / "prediction_en_ModelX_temp0.7_noise0.4_passage5_correct0.0.json"
RAGBENCH = HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl"
SAFE = HANDWRITTEN / "safe" / "2024-04-01-12-00-00-SAFE.json"
ANNOTATIONS = FIXTURES / "ragas" / "annotated_data.json"


def rgb_rows() -> list[dict]:
    return [json.loads(line) for line in RGB.read_text(encoding="utf-8").splitlines()]


def errors_of(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


def stored_ids(db_path: Path) -> list[str]:
    db = open_database(db_path)
    try:
        return [r.id for r in store_records.iterate(db)]
    finally:
        db.conn.close()


# -- limits and wrong types: the record's error, the others import ---------------------

BAD_RGB_LINES = {
    "deep nesting": ("[" * 10_000 + "]" * 10_000, "invalid JSON (nested more than 1024 levels"),
    "huge id": ('{"id": ' + "9" * 5000 + ', "query": "q", "prediction": "p"}', "id: integer of"),
    "positive 1.5": ('{"id": 9, "query": "q", "positive": 1.5}', "positive: expected a list"),
    "positive NaN": ('{"id": 9, "query": "q", "positive": NaN}', "positive: not a finite number"),
    "Infinity label": (
        '{"id": 9, "query": "q", "ans": "a", "prediction": "p", "label": [Infinity]}',
        "label[0]: not a finite number",
    ),
    "id an object": ('{"id": {"a": 1}, "query": "q", "prediction": "p"}', "id: expected a string"),
}


@pytest.mark.parametrize("case", BAD_RGB_LINES, ids=list(BAD_RGB_LINES))
def test_a_hostile_line_is_its_own_error(tmp_path: Path, case: str) -> None:
    bad, message = BAD_RGB_LINES[case]
    good = RGB.read_text(encoding="utf-8").splitlines()
    path = tmp_path / RGB.name
    path.write_text("\n".join([good[0], bad, *good[1:]]) + "\n", encoding="utf-8")
    result = run("import", path, "--db", tmp_path / "x.db")
    assert result.exit_code == 1 and "Traceback" not in result.output
    (error,) = errors_of(result)
    assert error.startswith(f"error: {path}:2: ") and message in error, error
    assert stored_ids(tmp_path / "x.db") == ["0", "1", "2"]


def test_nan_in_a_score_names_the_field(tmp_path: Path) -> None:
    lines = RAGBENCH.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    row["relevance_score"] = float("nan")
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(row), *lines[2:]]) + "\n")
    result = run("import", path, "--db", tmp_path / "x.db")
    assert result.exit_code == 1
    (error,) = errors_of(result)
    assert error.startswith(f"error: {path}:2: relevance_score: not a finite number")
    assert len(stored_ids(tmp_path / "x.db")) == len(lines) - 1


def test_mtrag_nan_is_still_read() -> None:
    """MT-RAG's pandas writes NaN for missing values: there it is no error."""
    _fmt, stream = formats.read(FIXTURES / "mtrag" / "responses-10.jsonl")
    entries = list(stream)
    assert entries and all(isinstance(e, ImportItem) for e in entries)


def test_a_line_that_is_not_utf8_first_does_not_stop_the_rest(tmp_path: Path) -> None:
    good = RGB.read_bytes().splitlines()
    path = tmp_path / RGB.name
    path.write_bytes(b"\n".join([b'{"id": 7, "query": "caf\xe9"}', *good]) + b"\n")
    result = run("import", path, "--db", tmp_path / "x.db")
    assert result.exit_code == 1
    (error,) = errors_of(result)
    assert error.startswith(f"error: {path}:1: query: not UTF-8 text (byte 0xe9")
    assert stored_ids(tmp_path / "x.db") == ["0", "1", "2"]


# -- whole-file documents: errors name a line too --------------------------------------


def test_safe_prompt_that_is_not_an_object_is_an_error(tmp_path: Path) -> None:
    doc = json.loads(SAFE.read_text(encoding="utf-8"))
    doc["per_prompt_data"][0] = True
    path = tmp_path / "x-SAFE.json"
    text = json.dumps(doc, indent=2)
    path.write_text(text)
    result = run("import", path, "--db", tmp_path / "x.db")
    assert result.exit_code == 1
    line = text.splitlines().index("    true,") + 1
    (error,) = errors_of(result)
    assert error == f"error: {path}:{line}: per_prompt_data[0]: expected an object, got a boolean"
    assert stored_ids(tmp_path / "x.db") == ["1", "2"]


@pytest.mark.parametrize("value", ["9" * 5000, "NaN", "[" * 3000 + "]" * 3000])
def test_safe_value_past_the_limits_is_its_records_error(tmp_path: Path, value: str) -> None:
    doc = json.loads(SAFE.read_text(encoding="utf-8"))
    doc["per_prompt_data"][1]["side2_posthoc_eval_data"]["num_claims"] = "@@"
    text = json.dumps(doc, indent=2)
    line = text[: text.index('"@@"')].count("\n") + 1
    path = tmp_path / "x-SAFE.json"
    path.write_text(text.replace('"@@"', value))
    result = run("import", path, "--db", tmp_path / "x.db")
    assert result.exit_code == 1 and "Traceback" not in result.output
    (error,) = errors_of(result)
    field = "per_prompt_data[1].side2_posthoc_eval_data.num_claims"
    assert error.startswith(f"error: {path}:{line}: {field}"), error
    assert stored_ids(tmp_path / "x.db") == ["0", "2"]
    # what is kept to write the document back is standard JSON
    out = tmp_path / "out.json"
    assert run("export", tmp_path / "x.db", "--out", out).exit_code == 0
    json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"{c} written back"))


def test_ragas_array_row_error_names_its_line(tmp_path: Path) -> None:
    rows = [
        {"user_input": "q1", "response": "a1.", "retrieved_contexts": ["c."]},
        {"user_input": "q2", "response": "a2.", "retrieved_contexts": "@@"},
        {"user_input": "q3", "response": "a3.", "retrieved_contexts": ["c."]},
    ]
    text = json.dumps(rows, indent=2)
    line = text[: text.index('"@@"')].count("\n") + 1
    path = tmp_path / "rows.json"
    path.write_text(text.replace('"@@"', "7"))
    result = run("import", path, "--db", tmp_path / "x.db")
    assert result.exit_code == 1
    (error,) = errors_of(result)
    assert error.startswith(f"error: {path}:{line}: [1].retrieved_contexts: expected a list")
    assert stored_ids(tmp_path / "x.db") == ["1", "3"]


def test_ragas_annotation_error_names_its_line(tmp_path: Path) -> None:
    doc = json.loads(ANNOTATIONS.read_text(encoding="utf-8"))
    metric = next(iter(doc))
    doc[metric][1] = "@@"
    text = json.dumps(doc, indent=2)
    line = text[: text.index('"@@"')].count("\n") + 1
    path = tmp_path / "annotations.json"
    path.write_text(text)
    _fmt, stream = formats.read(path)
    errors = [e for e in stream if isinstance(e, InputError)]
    assert [(e.line, e.field) for e in errors] == [(line, f"{metric}[1]")]


# -- repeated ids ----------------------------------------------------------------------


def test_repeated_rgb_ids_lose_no_record(tmp_path: Path) -> None:
    """ids 2, 1, 2: the repeated id falls back to record numbers, and the first record's
    number (1) is the second record's own id: its fallback must not overwrite it."""
    rows = rgb_rows()
    for row, rid in zip(rows, (2, 1, 2)):
        row["id"] = rid
    path = tmp_path / RGB.name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run("import", path, "--db", tmp_path / "x.db")
    assert result.exit_code == 0, result.output
    assert "3 new, 0 changed" in result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: {path}:3: id: '2' repeats (first on line 1): stored by record number, "
        "that one as '#1' and this one as '3'"
    ]
    assert stored_ids(tmp_path / "x.db") == ["#1", "1", "3"]


def test_repeated_ids_in_a_whole_read_file(tmp_path: Path) -> None:
    """The same rule where ids are read in full first (no ids at the start of lines)."""
    rows = [json.loads(line) for line in RAGBENCH.read_text(encoding="utf-8").splitlines()]
    for row, rid in zip(rows, ("x", "2", "x")):
        row.pop("id")
        row["id"] = rid  # last key: the streaming id pass does not apply
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _fmt, stream = formats.read(path)
    entries = list(stream)
    ids = [e.record.id for e in entries if isinstance(e, ImportItem)]
    assert ids[:3] == ["1", "2", "3"]
    assert len(set(ids)) == len(ids) == len(rows)
    (warning,) = [e for e in entries if isinstance(e, InputWarning)]
    assert warning.line == 3 and "first on line 1" in str(warning)


def test_fallback_ids_never_meet_real_ids() -> None:
    ids = {"1": 1, "#1": 1, "3": 2}
    assert fallback_id(1, ids) == "##1"
    assert fallback_id(2, ids) == "2"
    assert fallback_id(3, ids) == "#3"


def test_repeated_id_in_strict_mode_is_no_error(tmp_path: Path) -> None:
    rows = rgb_rows()
    rows[2]["id"] = rows[0]["id"]
    path = tmp_path / RGB.name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run("import", path, "--db", tmp_path / "x.db", "--strict")
    assert result.exit_code == 0 and "3 new" in result.stderr
    assert "warning:" in result.stderr


# -- files that are not regular files, and formats that do not fit ---------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    # a real process with a timeout: were the FIFO opened, the import would block
    result = subprocess.run(
        [sys.executable, "-m", "ragreview", "import", str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == f"Error: {fifo}: cannot read file: a FIFO, not a regular file"


@pytest.mark.parametrize(
    ("path", "what"), [("/dev/null", "a character device"), ("DIR", "a directory")]
)
def test_other_non_regular_files_are_refused(tmp_path: Path, path: str, what: str) -> None:
    target = tmp_path if path == "DIR" else Path(path)
    if not target.exists():
        pytest.skip(f"no {path}")
    result = run("import", target, "--db", tmp_path / "x.db")
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: {target}: cannot read file: {what}, not a regular file"


@pytest.mark.parametrize(
    ("source", "fmt"), [(RGB, "ragreview"), (RAGBENCH, "rgb"), (SAFE, "ragas")]
)
def test_a_forced_format_that_does_not_fit_is_an_error(tmp_path, source, fmt) -> None:
    result = run("import", source, "--db", tmp_path / "x.db", "--format", fmt)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"{source}:1: no record has the fields of the {fmt} format" in result.stderr
    assert not (tmp_path / "x.db").exists()


def test_a_forced_format_that_fits_still_imports(tmp_path: Path) -> None:
    result = run("import", RGB, "--db", tmp_path / "x.db", "--format", "rgb")
    assert result.exit_code == 0 and "3 new" in result.stderr


def test_native_value_too_deep_to_store_is_its_records_error(tmp_path: Path) -> None:
    """ragreview's own format keeps unknown fields as they are: one nested deeper than
    can be written back is refused (it parses: orjson reads 1024 levels)."""
    path = tmp_path / "native.jsonl"
    deep = "[" * 1000 + "]" * 1000
    path.write_text(f'{{"id": "a"}}\n{{"id": "b", "extra": {deep}}}\n{{"id": "c"}}\n')
    result = run("import", path, "--db", tmp_path / "x.db")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert errors_of(result) == [f"error: {path}:2: nested more than 255 levels deep"]
    assert stored_ids(tmp_path / "x.db") == ["a", "c"]
    assert run("export", tmp_path / "x.db", "--out", tmp_path / "out.jsonl").exit_code == 0


@pytest.mark.parametrize("indent", [2, None], ids=["pretty", "one line"])
def test_rgb_json_array_errors_name_their_line(tmp_path: Path, indent: int | None) -> None:
    """A line-per-record format written as one JSON array reads as its elements, and a
    bad element is located by line like any whole-file record."""
    rows = rgb_rows()
    rows[1]["positive"] = "@@"
    rows[1].pop("docs")
    text = json.dumps(rows, indent=indent)
    line = text[: text.index('"@@"')].count("\n") + 1
    path = tmp_path / RGB.name
    path.write_text(text.replace('"@@"', "NaN"))
    result = run("import", path, "--db", tmp_path / "x.db")
    assert result.exit_code == 1 and "Traceback" not in result.output
    (error,) = errors_of(result)
    assert error.startswith(f"error: {path}:{line}: [1].positive: not a finite number"), error
    assert stored_ids(tmp_path / "x.db") == ["0", "2"]


def test_ragas_lines_with_a_broken_first_line_import_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    good = {"user_input": "q2", "response": "a.", "retrieved_contexts": ["c."]}
    path.write_text('{"user_input": "q1", "respo\n' + json.dumps(good) + "\n")
    result = run("import", path, "--db", tmp_path / "x.db")
    assert result.exit_code == 1
    assert errors_of(result) == [
        f"error: {path}:1: invalid JSON (Unterminated string starting at column 22)"
    ]
    assert stored_ids(tmp_path / "x.db") == ["2"]
