"""The CLI contract (docs/architecture.md) end to end on the demo file."""

from __future__ import annotations

import json

import pytest

from ragreview.store import open_database
from ragreview.store import records as store_records


def read_jsonl(path) -> list:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_import_label_log_undo_export_round_trip(ragreview, demo_copy, tmp_path) -> None:
    db_path = tmp_path / "demo.ragreview.db"
    result = ragreview("import", demo_copy)
    assert result.exit_code == 0, result.stderr
    assert "5 new" in result.stderr and db_path.exists()

    result = ragreview(
        "label",
        demo_copy,
        "covid-1",
        "relevant",
        "0c.",
        "true",
        "--reviewer",
        "ann",
        "--reason",
        "mentions patients",
    )
    assert result.exit_code == 0, result.stderr
    db = open_database(db_path)
    assert store_records.find(db, "covid-1").human == {"relevant": {"0c": True}}
    db.conn.close()

    result = ragreview("log", demo_copy, "--json")
    assert result.exit_code == 0, result.stderr
    (event,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert set(event) == {
        "record", "kind", "pass", "name", "target", "old", "new", "reviewer", "at", "reason",
        "rule",
    }  # fmt: skip
    assert {k: v for k, v in event.items() if k != "at"} == {
        "record": "covid-1",
        "kind": "set",
        "pass": None,
        "name": "relevant",
        "target": "0c",
        "old": None,
        "new": True,
        "reviewer": "ann",
        "reason": "mentions patients",
        "rule": None,
    }

    out = tmp_path / "out.jsonl"
    result = ragreview("export", demo_copy, "--out", out, "--as", "ragreview")
    assert result.exit_code == 0, result.stderr
    exported = read_jsonl(out)
    assert exported[0]["labels"]["human"] == {"relevant": {"0c": True}}
    assert exported[0]["labels"]["judge"] == read_jsonl(demo_copy)[0]["labels"]["judge"]

    result = ragreview("undo", demo_copy, "--reviewer", "ann")
    assert result.exit_code == 0, result.stderr
    assert "covid-1 relevant 0c" in result.stdout
    result = ragreview("undo", demo_copy, "--reviewer", "ann")
    assert result.exit_code == 1 and "nothing to undo" in result.stderr

    result = ragreview("export", db_path, "--out", out, "--as", "ragreview", "--force")
    assert result.exit_code == 0, result.stderr
    assert read_jsonl(out) == read_jsonl(demo_copy)

    result = ragreview("log", db_path, "--json", "--record", "covid-1")
    assert [json.loads(line)["new"] for line in result.stdout.splitlines()] == [True, None]


def test_export_source_of_native_file_and_stdout(ragreview, demo_copy) -> None:
    result = ragreview("export", demo_copy, "--out", "-")
    assert result.exit_code == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == read_jsonl(demo_copy)


def test_label_values_json_and_bare_words(ragreview, demo_copy, tmp_path) -> None:
    assert ragreview("label", demo_copy, "bio-1", "fact", "f4", "S").exit_code == 0
    assert ragreview("label", demo_copy, "bio-1", "fact", "f3", '"IR"').exit_code == 0
    assert (
        ragreview("label", demo_copy, "covid-2", "support_keys", "a", '["0a","0b."]').exit_code == 0
    )
    assert ragreview("label", demo_copy, "rgb-1", "rejected", "*", "true").exit_code == 0
    db = open_database(tmp_path / "demo.ragreview.db")
    assert store_records.find(db, "bio-1").human == {"fact": {"f4": "S", "f3": "IR"}}
    assert store_records.find(db, "covid-2").human == {"support_keys": {"a": ["0a", "0b"]}}
    assert store_records.find(db, "rgb-1").human == {"rejected": {"*": True}}
    db.conn.close()
    result = ragreview("label", demo_copy, "bio-1", "fact", "f4", "judge")
    assert result.exit_code == 0 and "judge" in result.stdout


def test_mark_redo_and_settings(ragreview, demo_copy, tmp_path) -> None:
    assert ragreview("mark", demo_copy, "covid-2", "--reviewed").exit_code == 0
    assert ragreview("label", demo_copy, "covid-2", "supported", "b", "false").exit_code == 0
    assert ragreview("undo", demo_copy).exit_code == 0
    result = ragreview("redo", demo_copy)
    assert result.exit_code == 0 and "false" in result.stdout
    result = ragreview("settings", demo_copy, "trace.variant=length", "longform.k=64")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "trace.variant=length",
        "rgb.variant=reference",
        "longform.k=64",
        "deepeval.penalize_ambiguous_claims=false",
    ]
    db = open_database(tmp_path / "demo.ragreview.db")
    stored = store_records.find(db, "covid-2")
    assert (stored.status, stored.reviewed_by) == ("reviewed", "tester")
    assert stored.human == {"supported": {"b": False}}
    db.conn.close()
    result = ragreview("settings", demo_copy, "longform.k=0")
    assert result.exit_code == 1 and "longform.k" in result.stderr
    result = ragreview("mark", demo_copy, "covid-2")
    assert result.exit_code == 2


def test_reimport_keeps_overrides_and_marks_changed_records_stale(
    ragreview, demo_copy, tmp_path
) -> None:
    assert ragreview("label", demo_copy, "covid-1", "relevant", "0c", "true").exit_code == 0
    lines = demo_copy.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["question"] = "What drives prolonged inflammation?"
    lines[0] = json.dumps(first)
    demo_copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = ragreview("import", demo_copy)
    assert result.exit_code == 0, result.stderr
    assert "1 changed, 1 now stale, 4 unchanged" in result.stderr
    db = open_database(tmp_path / "demo.ragreview.db")
    stored = store_records.find(db, "covid-1")
    assert stored.status == "stale" and stored.human == {"relevant": {"0c": True}}
    assert stored.record.question == "What drives prolonged inflammation?"
    db.conn.close()


def test_several_datasets_in_one_database(ragreview, demo_copy, tmp_path) -> None:
    db_path = tmp_path / "shared.ragreview.db"
    second = tmp_path / "second.jsonl"
    second.write_text(demo_copy.read_text(encoding="utf-8"), encoding="utf-8")
    assert ragreview("import", demo_copy, "--db", db_path).exit_code == 0
    assert ragreview("import", second, "--db", db_path, "--dataset", "two").exit_code == 0
    result = ragreview("label", db_path, "covid-1", "relevant", "0c", "true")
    assert result.exit_code == 1 and "choose one with --dataset" in result.stderr
    for dataset, target in (("demo", "0c"), ("two", "1b")):
        args = ("label", db_path, "covid-1", "relevant", target, "false", "--dataset", dataset)
        assert ragreview(*args).exit_code == 0
    assert ragreview("undo", db_path, "--dataset", "demo").exit_code == 0
    db = open_database(db_path)
    assert store_records.find(db, "covid-1", "demo").human == {}
    assert store_records.find(db, "covid-1", "two").human == {"relevant": {"1b": False}}
    db.conn.close()
    result = ragreview("log", db_path, "--dataset", "two", "--json")
    assert [json.loads(line)["target"] for line in result.stdout.splitlines()] == ["1b"]


def test_export_reviewed_only(ragreview, demo_copy, tmp_path) -> None:
    assert ragreview("mark", demo_copy, "bio-1", "--reviewed").exit_code == 0
    out = tmp_path / "reviewed.jsonl"
    result = ragreview("export", demo_copy, "--out", out, "--as", "ragreview", "--reviewed-only")
    assert result.exit_code == 0, result.stderr
    assert [r["id"] for r in read_jsonl(out)] == ["bio-1"]


@pytest.mark.cli_smoke
def test_usage_errors_exit_2(ragreview, demo_copy) -> None:
    result = ragreview("settings", demo_copy, "trace.variant")
    assert result.exit_code == 2 and "NAME=VALUE" in result.stderr
    assert ragreview("label", demo_copy, "covid-1").exit_code == 2
    assert ragreview("import", demo_copy, "--format", "nope").exit_code == 2
