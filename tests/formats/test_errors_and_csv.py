"""Bad input names file:line and field; --format; CSV export; import isolation."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import FIXTURES, HANDWRITTEN, REPO, run

RAGBENCH = HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl"
RGB_NOISE = HANDWRITTEN / "rgb" / "prediction_en_ModelX_temp0.7_noise0.4_passage5_correct0.0.json"


def broken_copy(tmp_path: Path, source: Path, line: int, edit) -> Path:
    lines = source.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[line - 1])
    edit(row)
    lines[line - 1] = json.dumps(row, ensure_ascii=False)
    path = tmp_path / source.name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("source", "line", "edit", "field"),
    [
        (
            RAGBENCH,
            2,
            lambda r: r.update(all_relevant_sentence_keys="0a"),
            "all_relevant_sentence_keys",
        ),
        (
            RAGBENCH,
            3,
            lambda r: r["documents_sentences"][0].append(["0z"]),
            "documents_sentences[0][3]",
        ),
        (RAGBENCH, 1, lambda r: r.update(relevance_score="high"), "relevance_score"),
        (
            RAGBENCH,
            2,
            lambda r: r["response_sentences"].append([1, "x"]),
            "response_sentences[2][0]",
        ),
        (RGB_NOISE, 2, lambda r: r.update(label=[1, 1]), "label"),
        (RGB_NOISE, 3, lambda r: r.update(factlabel="yes"), "factlabel"),
        (RGB_NOISE, 2, lambda r: r.pop("query"), "query"),
        (
            FIXTURES / "mtrag" / "responses-10.jsonl",
            4,
            lambda r: r.update(answerability=["MAYBE"]),
            "answerability",
        ),
        (
            FIXTURES / "mtrag" / "taskb_input.jsonl",
            2,
            lambda r: r["contexts"][0].update(text=3),
            "contexts[0].text",
        ),
        (
            FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl",
            5,
            lambda r: r["annotations"][1]["human-atomic-facts"][0].update(label="X"),
            "annotations[1].human-atomic-facts[0].label",
        ),
    ],
)
def test_bad_record_names_file_line_and_field(tmp_path, source, line, edit, field) -> None:
    path = broken_copy(tmp_path, source, line, edit)
    result = run("import", path, "--db", tmp_path / "x.db", "--strict")
    assert result.exit_code == 1
    assert f"{path}:{line}: {field}:" in result.output
    assert "Traceback" not in result.output
    assert "nothing imported" in result.output


def test_bad_safe_annotation_names_the_field(tmp_path: Path) -> None:
    doc = json.loads((HANDWRITTEN / "safe" / "2024-04-01-12-00-00-SAFE.json").read_text())
    doc["per_prompt_data"][1]["side2_posthoc_eval_data"]["checked_statements"][2]["annotation"] = (
        "Maybe"
    )
    path = tmp_path / "bad-SAFE.json"
    text = json.dumps(doc, indent=2)
    path.write_text(text)
    line = text[: text.index('"Maybe"')].count("\n") + 1  # a whole-file error has a line too
    result = run("import", path, "--db", tmp_path / "x.db", "--strict")
    assert result.exit_code == 1
    field = "per_prompt_data[1].side2_posthoc_eval_data.checked_statements[2].annotation"
    assert (
        f"{path}:{line}: {field}: expected Supported, Not Supported or Irrelevant" in result.output
    )


def test_invalid_json_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    lines = RAGBENCH.read_text().splitlines()
    path.write_text(lines[0] + "\n{not json\n")
    result = run("import", path, "--db", tmp_path / "x.db", "--strict")
    assert result.exit_code == 1
    assert f"{path}:2: invalid JSON" in result.output


def test_format_option_overrides_detection(tmp_path: Path) -> None:
    # a ragas-style file that would also read as something else is forced to ragas
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"question": "q?", "contexts": ["A. B."], "answer": "A."}) + "\n")
    assert run("import", path, "--db", tmp_path / "a.db", "--format", "ragas").exit_code == 0
    result = run("import", RAGBENCH, "--db", tmp_path / "b.db", "--format", "mtrag", "--strict")
    assert result.exit_code == 1  # rows of another format fail with a located message
    assert f"{RAGBENCH}:1:" in result.output


def test_ragas_rows_with_verdicts(tmp_path: Path) -> None:
    row = {
        "user_input": "Where is the Eiffel Tower?",
        "retrieved_contexts": ["The Eiffel Tower is in Paris.", "Paris is in France."],
        "response": "It is in Paris. It is 300 m tall.",
        "reference": "Paris.",
        "statements": [
            {"statement": "The Eiffel Tower is in Paris.", "reason": "ctx 1", "verdict": 1},
            {"statement": "The Eiffel Tower is 300 m tall.", "reason": "absent", "verdict": 0},
        ],
        "context_precision_verdicts": [
            {"reason": "answers it", "verdict": 1},
            {"reason": "no", "verdict": 0},
        ],
        "faithfulness": 0.5,
        "context_precision": 0.9999999999,
        "sample_id": "eiffel",
    }
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(row) + "\n")
    db = tmp_path / "r.db"
    assert run("import", path, "--db", db, "--strict").exit_code == 0
    assert run("label", db, "eiffel", "statement", "s2", "true").exit_code == 0
    out = tmp_path / "out.jsonl"
    assert run("export", db, "--out", out).exit_code == 0
    new = json.loads(out.read_text())
    assert new["statements"][1]["verdict"] == 1
    assert new["faithfulness"] == 1.0  # both statements now true
    assert {k for k in row if json.dumps(row[k]) != json.dumps(new[k])} <= {
        "statements",
        "faithfulness",
        "context_precision",
    }


def test_csv_export(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    assert run("import", RAGBENCH, "--db", db).exit_code == 0
    assert run("label", db, "covidqa-17", "relevant", "0c", "true").exit_code == 0
    out = tmp_path / "out.csv"
    result = run("export", db, "--out", out, "--as", "csv")
    assert result.exit_code == 0, result.output
    with out.open(newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [r["id"] for r in table] == ["covidqa-17", "covidqa-18", "finqa-3", "cuad-5"]
    first = table[0]
    assert first["task"] == "trace" and first["status"] == "unreviewed"
    assert float(first["judge.trace.relevance"]) == pytest.approx(3 / 5)
    assert float(first["reviewed.trace.relevance"]) == pytest.approx(4 / 5)


def test_formats_do_not_import_nltk() -> None:
    code = (
        "import sys, ragreview.formats, ragreview.core.rgb_rules; "
        "bad = [m for m in ('nltk', 'textual', 'click', 'openai') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_line_separators_inside_strings_stay_in_their_line(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in RAGBENCH.read_text().splitlines()]
    rows[0]["question"] = "Why\u2028now\x85?"
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in rows), "utf-8")
    db = tmp_path / "r.db"
    assert run("import", path, "--db", db, "--strict").exit_code == 0
    out = tmp_path / "out.jsonl"
    assert run("export", db, "--out", out).exit_code == 0
    assert [json.loads(x) for x in out.read_text("utf-8").split("\n") if x] == rows


def test_strict_import_rolls_back(tmp_path: Path) -> None:
    lines = RAGBENCH.read_text().splitlines()
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join([*lines[:3], "{broken", lines[3]]) + "\n")
    db = tmp_path / "r.db"
    result = run("import", path, "--db", db, "--strict")
    assert result.exit_code == 1
    from ragreview.store import open_database

    assert open_database(db).conn.execute("SELECT count(*) FROM records").fetchone()[0] == 0
    result = run("import", path, "--db", db)  # without --strict the good records go in
    assert result.exit_code == 1
    assert open_database(db).conn.execute("SELECT count(*) FROM records").fetchone()[0] == 4
