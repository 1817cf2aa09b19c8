"""A user's own JSON Lines / CSV through ``--map`` gives the same records, labels and
metrics as the same data written in ragreview's format; ``formats`` and the message for
a file no format accepts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragreview import formats

from .helpers import HANDWRITTEN, run

OWN = HANDWRITTEN / "own"
CLI_MAP = (
    "id=uid,task=meta.task,question=query,response=answer,contexts=retrieved[].text,"
    "references=gold.answers,answerability=gold.answerability,label.idk=eval.idk,"
    "scores.mtrag.bertscore_r=eval.bertscore_r"
)
CSV_MAP = (
    "id=uid,task=task,question=query,response=answer,contexts=contexts,references=gold,"
    "answerability=answerability,label.idk=idk,scores.mtrag.bertscore_r=bertscore_r"
)


def per_record(path: Path) -> dict:
    result = run("metrics", path, "--per-record", "--json")
    assert result.exit_code == 0, result.output
    return {
        o["id"]: (o["judge"], o["effective"]) for o in map(json.loads, result.stdout.splitlines())
    }


def copy(name: str, tmp_path: Path, sub: str) -> Path:
    folder = tmp_path / sub
    folder.mkdir(exist_ok=True)
    shutil.copy(OWN / name, folder / name)
    return folder / name


@pytest.fixture
def native(tmp_path) -> dict:
    path = copy("results_native.jsonl", tmp_path, "native")
    assert run("import", path, "--strict").exit_code == 0
    return per_record(path)


@pytest.mark.parametrize(
    "name, spec",
    [
        ("results.jsonl", str(OWN / "results.map.toml")),
        ("results.jsonl", CLI_MAP),
        ("results.csv", CSV_MAP),
    ],
    ids=["toml", "cli", "csv"],
)
def test_mapped_rows_give_the_native_metrics(name, spec, native, tmp_path) -> None:
    path = copy(name, tmp_path, "own")
    result = run("import", path, "--map", spec, "--strict")
    assert result.exit_code == 0, result.output
    got = per_record(path)
    assert got == native
    assert set(got) == {"q1", "q2", "q3"}
    assert got["q2"][0]["mtrag.rb_agg_idk"] == 0.0  # idk on an answerable question


def test_open_takes_the_mapping_too(tmp_path) -> None:
    from ragreview.cli.session import open_target

    path = copy("results.jsonl", tmp_path, "own")
    opened = open_target(str(path), mapping=formats.mapped.parse_spec(CLI_MAP))
    assert opened.dataset == "results"
    assert opened.db.conn.execute("SELECT format FROM datasets").fetchone()[0] == "mapped"


def test_export_writes_a_changed_label_at_its_mapped_path(tmp_path) -> None:
    path = copy("results.jsonl", tmp_path, "own")
    assert run("import", path, "--map", CLI_MAP).exit_code == 0
    assert run("label", path, "q2", "idk", "*", "0").exit_code == 0
    out = tmp_path / "out.jsonl"
    assert run("export", path, "--out", out).exit_code == 0
    original = path.read_text().splitlines()
    written = out.read_text().splitlines()
    assert written[0] == original[0] and written[2] == original[2]  # untouched rows: as read
    want = json.loads(original[1])
    want["eval"]["idk"] = 0
    assert json.loads(written[1]) == want
    # a label the mapping has no field for cannot be written back: refused, named
    assert run("label", path, "q1", "underspecified", "*", "1").exit_code == 0
    result = run("export", path, "--out", out)
    assert result.exit_code == 1
    assert "q1" in result.output and "underspecified" in result.output


def test_bad_mappings_and_rows_are_named(tmp_path) -> None:
    path = copy("results.jsonl", tmp_path, "own")
    result = run("import", path, "--map", "questoin=query")
    assert result.exit_code == 1 and "questoin: unknown target" in result.output
    result = run("import", path, "--map", "question")
    assert result.exit_code == 1 and "expected target=path" in result.output
    rows = path.read_text().splitlines()
    bad = json.loads(rows[1])
    bad["answer"] = {"text": "not a string"}
    path.write_text("\n".join([rows[0], json.dumps(bad), rows[2]]) + "\n")
    result = run("import", path, "--map", CLI_MAP)
    assert result.exit_code == 1
    assert f"{path}:2: answer: expected a list" in result.output  # the user's field name
    assert "2 new" in result.output  # the other rows imported


def test_a_file_no_format_accepts_names_the_closest_formats(tmp_path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps({"question": "q?", "retrieved": ["a"], "task_id": "t"}) + "\n")
    result = run("import", path)
    assert result.exit_code == 1
    assert "closest: " in result.output
    assert "ragas misses contexts" in result.output
    assert "mtrag misses input" in result.output
    assert "--map" in result.output


def test_formats_lists_every_reader() -> None:
    result = run("formats", "--json")
    assert result.exit_code == 0
    listed = [json.loads(line) for line in result.stdout.splitlines()]
    assert [row["format"] for row in listed] == formats.names()
    ragbench = listed[0]
    assert ragbench["needs"] == ["documents_sentences", "all_relevant_sentence_keys"]
    assert "inspectorraget" in run("formats").stdout


def test_a_mapped_csv_exports_back_as_csv(tmp_path) -> None:
    import csv

    path = copy("results.csv", tmp_path, "own")
    assert run("import", path, "--map", CSV_MAP).exit_code == 0
    assert run("label", path, "q3", "idk", "*", "0").exit_code == 0
    out = tmp_path / "out.csv"
    assert run("export", path, "--out", out).exit_code == 0
    before = list(csv.DictReader(path.open(newline="")))
    after = list(csv.DictReader(out.open(newline="")))
    before[2]["idk"] = "0"
    assert after == before


@pytest.mark.parametrize("name", ["results.jsonl", "results.csv"])
def test_a_path_that_leads_nowhere_is_an_error_and_nothing_imports(tmp_path, name) -> None:
    path = copy(name, tmp_path, "own")
    spec = (CLI_MAP if name.endswith(".jsonl") else CSV_MAP).replace(
        "question=query", "question=nope.deeper[3].x"
    )
    first = 2 if name.endswith(".csv") else 1  # (the line of the first row)
    for strict in ([], ["--strict"]):
        result = run("import", path, "--map", spec, *strict)
        assert result.exit_code == 1, result.output
        assert result.output.strip().splitlines() == [
            f"Error: {path}:{first}: question: the path 'nope.deeper[3].x' leads nowhere in the "
            "first 3 rows (see docs/formats.md, --map)"
        ], result.output
        assert not (tmp_path / "own" / "results.ragreview.db").exists()


def test_strict_refuses_a_row_where_a_path_leads_nowhere(tmp_path) -> None:
    """The first rows have the field: without --strict the row that lacks it imports
    without it; with --strict it is that row's error, naming target and path."""
    path = copy("results.jsonl", tmp_path, "own")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    del rows[2]["gold"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run("import", path, "--map", CLI_MAP, "--strict")
    assert result.exit_code == 1 and "nothing imported (--strict)" in result.output
    assert [line for line in result.output.splitlines() if line.startswith("error:")] == [
        f"error: {path}:3: references: the path 'gold.answers' leads nowhere in this row (--strict)"
    ], result.output
    result = run("import", path, "--map", CLI_MAP)
    assert result.exit_code == 0 and "3 new" in result.output, result.output
