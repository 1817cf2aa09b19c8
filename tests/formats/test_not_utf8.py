"""A byte that is not UTF-8 is the error of the record that holds it, in every format
(issue 25): whole-file JSON documents (a ragas annotation export, InspectorRAGet
experiments), CSV read through ``--map`` and JSON Lines. The error names file, line and
field; the other records import; ``--strict`` refuses the file; never a traceback.
Real fixtures (copies of /work/shared/fixtures in fixtures/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .helpers import FIXTURES, run

ANNOTATIONS = FIXTURES / "ragas" / "annotated_data.json"
INSPECTORRAGET = sorted((FIXTURES / "inspectorraget").glob("*.json"))


def _errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def _imported(output: str) -> int:
    found = re.search(r"dataset '[^']*': (\d+) new", output)
    return int(found[1]) if found else 0


def _import(path: Path, db: Path, *extra: object) -> tuple[int, str]:
    result = run("import", path, "--db", db, *extra)
    output = result.stderr + result.stdout
    assert "Traceback" not in output, output
    return result.exit_code, output


def _with_byte(source: Path, out: Path, after: bytes, occurrence: int = 1) -> int:
    """``source`` copied to ``out`` with the byte 0xff inside the string that follows the
    ``occurrence``-th ``after`` (a key such as ``"response": "``); its line."""
    raw = source.read_bytes()
    at = -1
    for _ in range(occurrence):
        at = raw.index(after, at + 1)
    at += len(after) + 2  # (two characters into the string)
    out.write_bytes(raw[:at] + b"\xff" + raw[at:])
    return raw.count(b"\n", 0, at) + 1


def _baseline(source: Path, tmp_path: Path) -> int:
    code, output = _import(source, tmp_path / "clean.db")
    assert code == 0, output
    return _imported(output)


def test_ragas_annotation_export_loses_only_the_sample(tmp_path: Path) -> None:
    total = _baseline(ANNOTATIONS, tmp_path)
    path = tmp_path / "annotated_data.json"
    line = _with_byte(ANNOTATIONS, path, b'"response": "', occurrence=7)
    code, output = _import(path, tmp_path / "x.db")
    assert code == 1 and _imported(output) == total - 1, output
    (error,) = _errors(output)
    assert re.fullmatch(
        rf"error: {re.escape(str(path))}:{line}: \w+\[\d+\]\.metric_input\.response: "
        r"not UTF-8 text \(byte 0xff at character 3\)",
        error,
    ), error


def test_strict_refuses_the_whole_document(tmp_path: Path) -> None:
    path = tmp_path / "annotated_data.json"
    _with_byte(ANNOTATIONS, path, b'"response": "')
    code, output = _import(path, tmp_path / "x.db", "--strict")
    assert code == 1 and _imported(output) == 0, output
    assert len(_errors(output)) == 1 and "not UTF-8 text" in output


@pytest.mark.parametrize("source", INSPECTORRAGET, ids=[p.name for p in INSPECTORRAGET])
def test_inspectorraget_experiment_loses_only_the_evaluation(source: Path, tmp_path: Path) -> None:
    total = _baseline(source, tmp_path)
    path = tmp_path / source.name
    raw = source.read_bytes()
    name = "results" if b'"results": [' in raw else "evaluations"  # (schema v2, v1)
    records = raw.index(f'"{name}": ['.encode())
    key = b'"task_id": "'
    occurrence = raw[:records].count(key) + 3  # the third evaluation's task id
    line = _with_byte(source, path, key, occurrence)
    code, output = _import(path, tmp_path / "x.db")
    assert code == 1 and _imported(output) == total - 1, output
    assert _errors(output) == [
        f"error: {path}:{line}: {name}[2].task_id: not UTF-8 text (byte 0xff at character 3)"
    ], output


def test_a_byte_outside_the_records_refuses_the_file_at_its_field(tmp_path: Path) -> None:
    """An InspectorRAGet task is shared by its evaluations and kept to write the file
    back: no record holds it, so the file is refused, naming line and field."""
    source = INSPECTORRAGET[0]
    raw = source.read_bytes()
    tasks = raw.index(b'"tasks"')
    occurrence = raw[:tasks].count(b'"text": "') + 1
    path = tmp_path / source.name
    line = _with_byte(source, path, b'"text": "', occurrence)
    code, output = _import(path, tmp_path / "x.db")
    assert code == 1 and _imported(output) == 0, output
    assert re.fullmatch(
        rf"Error: {re.escape(str(path))}:{line}: tasks\[0\]\S*\.text: not UTF-8 text "
        r"\(byte 0xff at character 3\), outside the records",
        output.strip(),
    ), output


CSV_MAP = ("--map", "question=q,response=a,scores.s=s")


def test_csv_cell_is_its_rows_error(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_bytes(b'q,a,s\nwhat?,yes,1\nwh\xffo?,no,2\nwhy?,"two\nlines",3\nhow?,so,4\n')
    code, output = _import(path, tmp_path / "x.db", *CSV_MAP)
    assert code == 1 and _imported(output) == 3, output
    assert _errors(output) == [f"error: {path}:3: q: not UTF-8 text (byte 0xff at character 3)"], (
        output
    )
    code, output = _import(path, tmp_path / "y.db", *CSV_MAP, "--strict")
    assert code == 1 and _imported(output) == 0, output


def test_csv_header_not_utf8_refuses_the_file_at_line_1(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_bytes(b"q,a\xfe,s\nwhat?,yes,1\n")
    code, output = _import(path, tmp_path / "x.db", *CSV_MAP)
    assert code == 1 and _imported(output) == 0, output
    assert _errors(output) == [
        f"error: {path}:1: a\\xfe: not UTF-8 text (byte 0xfe at character 2)"
    ], output


def test_json_lines_error_names_the_field(tmp_path: Path) -> None:
    lines = (FIXTURES / "demo.jsonl").read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b'"question": "', b'"question": "\xe9', 1)
    path = tmp_path / "demo.jsonl"
    path.write_bytes(b"".join(lines))
    code, output = _import(path, tmp_path / "x.db")
    assert code == 1 and _imported(output) == len(lines) - 1, output
    assert _errors(output) == [
        f"error: {path}:2: question: not UTF-8 text (byte 0xe9 at character 1)"
    ], output
