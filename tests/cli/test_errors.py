"""Bad input: one clear line naming file:line and field, exit 1, never a traceback."""

from __future__ import annotations

import json
import os

import pytest

from ragreview.store import open_database
from ragreview.store import records as store_records

# exit codes and the wording on stderr: checked through a real process too
pytestmark = pytest.mark.cli_smoke

GOOD = [
    {
        "id": "ok-1",
        "documents": [{"sentences": [["0a", "x"]]}],
        "response": [["a", "A."]],
        "labels": {"judge": {"relevant": {"0a": True}}},
    },
    {"id": "ok-2", "response": [["a", "B."]]},
]
DOC = {"documents": [{"sentences": [["0a", "x"]]}]}

# (name, bad line text, field named in the message)
BAD = [
    ("invalid JSON", '{"id": "x", "task": }', "invalid JSON"),
    ("missing id", json.dumps({"task": "trace"}), "id: missing"),
    ("duplicate id", json.dumps({"id": "ok-1"}), "id: duplicate id 'ok-1'"),
    ("wrong type", json.dumps({"id": "x", "documents": {"a": 1}}), "documents: expected a list"),
    ("nested wrong type", json.dumps({"id": "x", "response": [["a", 3]]}), "response[0][1]:"),
    ("not an object", "[1, 2]", "expected a JSON object"),
    (
        "unknown label name",
        json.dumps({"id": "x", **DOC, "labels": {"judge": {"relevance": {"0a": True}}}}),
        "labels.judge.relevance: unknown label",
    ),
    (
        "label on missing key",
        json.dumps({"id": "x", **DOC, "labels": {"human": {"relevant": {"3c": True}}}}),
        "labels.human.relevant.3c: record 'x' has no doc key '3c'",
    ),
    (
        "value of wrong type",
        json.dumps({"id": "x", **DOC, "labels": {"judge": {"relevant": {"0a": "yes"}}}}),
        "labels.judge.relevant.0a: relevant takes true or false",
    ),
    ("labels not an object", json.dumps({"id": "x", "labels": []}), "labels: expected an object"),
]


def write_lines(path, lines) -> None:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def assert_clean_error(result) -> None:
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout


# A duplicate is only a duplicate after its first occurrence: it cannot come first.
PLACED = [
    (*b, first) for b in BAD for first in (False, True) if not (first and b[0] == "duplicate id")
]


@pytest.mark.parametrize(
    ("case", "bad", "field", "bad_first"),
    PLACED,
    ids=[f"{p[0]}-{'first' if p[3] else 'last'}" for p in PLACED],
)
def test_bad_record_is_listed_and_good_ones_import(
    ragreview, tmp_path, case, bad, field, bad_first
) -> None:
    path = tmp_path / "in.jsonl"
    good = [json.dumps(r) for r in GOOD]
    lines = [bad, *good] if bad_first else [*good, "", bad]
    write_lines(path, lines)
    line_no = 1 if bad_first else 4
    result = ragreview("import", path)
    assert_clean_error(result)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert errors[0].startswith(f"error: {path}:{line_no}: ")
    assert field in errors[0]
    assert "1 invalid record was skipped" in result.stderr
    db = open_database(tmp_path / "in.ragreview.db")
    assert [r.id for r in store_records.iterate(db)] == ["ok-1", "ok-2"]
    db.conn.close()


@pytest.mark.parametrize(("case", "bad", "field"), BAD[:3], ids=[b[0] for b in BAD[:3]])
def test_strict_writes_nothing(ragreview, tmp_path, case, bad, field) -> None:
    path = tmp_path / "in.jsonl"
    write_lines(path, [*(json.dumps(r) for r in GOOD), bad])
    result = ragreview("import", path, "--strict")
    assert_clean_error(result)
    assert f"{path}:3: " in result.stderr and field in result.stderr
    assert "nothing imported (--strict)" in result.stderr
    assert not (tmp_path / "in.ragreview.db").exists()


def test_strict_with_existing_db_changes_nothing(ragreview, tmp_path) -> None:
    path = tmp_path / "in.jsonl"
    write_lines(path, [json.dumps(GOOD[0])])
    assert ragreview("import", path).exit_code == 0
    write_lines(path, [json.dumps(r) for r in GOOD] + ['{"broken'])
    assert_clean_error(ragreview("import", path, "--strict"))
    db = open_database(tmp_path / "in.ragreview.db")
    assert [r.id for r in store_records.iterate(db)] == ["ok-1"]
    db.conn.close()


def test_several_errors_each_on_its_own_line(ragreview, tmp_path) -> None:
    path = tmp_path / "in.jsonl"
    write_lines(path, [bad for _, bad, _ in BAD])
    result = ragreview("import", path)
    assert_clean_error(result)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    # the "duplicate id" line is valid here (nothing came before it)
    assert len(errors) == len(BAD) - 1
    dup = [b[0] for b in BAD].index("duplicate id") + 1
    numbers = [n for n in range(1, len(BAD) + 1) if n != dup]
    for number, line, (_, _, field) in zip(
        numbers, errors, [b for b in BAD if b[0] != "duplicate id"]
    ):
        assert line.startswith(f"error: {path}:{number}: ") and field in line


def test_empty_file(ragreview, tmp_path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n  \n", encoding="utf-8")
    result = ragreview("import", path)
    assert_clean_error(result)
    assert result.stderr.strip() == f"Error: {path}: file is empty"
    assert not (tmp_path / "empty.ragreview.db").exists()


def test_missing_file(ragreview, tmp_path) -> None:
    result = ragreview("import", tmp_path / "nope.jsonl")
    assert_clean_error(result)
    assert "nope.jsonl: no such file" in result.stderr


def test_unreadable_file_is_a_directory(ragreview, tmp_path) -> None:
    path = tmp_path / "dir.jsonl"
    path.mkdir()
    result = ragreview("import", path)
    assert_clean_error(result)
    assert result.stderr.strip().startswith(f"Error: {path}: cannot read file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files regardless of permissions")
def test_unreadable_file_without_permission(ragreview, tmp_path) -> None:
    path = tmp_path / "secret.jsonl"
    write_lines(path, [json.dumps(GOOD[0])])
    path.chmod(0)
    result = ragreview("import", path)
    assert_clean_error(result)
    assert f"{path}: cannot read file" in result.stderr


def test_not_utf8(ragreview, tmp_path) -> None:
    path = tmp_path / "latin.jsonl"
    path.write_bytes('{"id": "caf\xe9"}\n'.encode("latin-1"))
    result = ragreview("import", path)
    assert_clean_error(result)
    assert f"{path}:1: id: not UTF-8 text (byte 0xe9" in result.stderr  # (line and field)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("covid-1", "relevance", "0a", "true"), "name: unknown label 'relevance'"),
        (("covid-1", "relevant", "9z", "true"), "target: record 'covid-1' has no doc key '9z'"),
        (
            ("covid-1", "relevant", "0a", "maybe"),
            'value: relevant takes true or false, got "maybe"',
        ),
        (("bio-1", "fact", "f1", "0.5"), "value: fact takes one of"),
        (("nope", "relevant", "0a", "true"), "no record with id 'nope'"),
    ],
)
def test_label_errors(ragreview, demo_copy, args, message) -> None:
    result = ragreview("label", demo_copy, *args)
    assert_clean_error(result)
    assert result.stderr.strip() == f"Error: {message}" or message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_export_to_unwritable_place(ragreview, demo_copy, tmp_path) -> None:
    result = ragreview("export", demo_copy, "--out", tmp_path / "no" / "dir.jsonl")
    assert_clean_error(result)
    assert "cannot write" in result.stderr


def test_import_a_database_is_refused(ragreview, demo_copy, tmp_path) -> None:
    assert ragreview("import", demo_copy).exit_code == 0
    result = ragreview("import", tmp_path / "demo.ragreview.db")
    assert_clean_error(result)
    assert "not a database" in result.stderr
