"""Guidelines and the rule behind a correction (docs/align.md): rules parsed from the
guidelines' Markdown, `label --rule`, the tag through undo/redo, merge and export, and
agreement per rule on a hand-made dataset."""

from __future__ import annotations

import json
import shutil

import pytest

from ragreview.core.guidelines import parse_rules
from ragreview.services.judge.align import corrections, example_text
from ragreview.store import guidelines, open_database
from ragreview.store import records as store_records

from .agreement_helpers import ROOT, quick, run, trace_record, write_jsonl

GUIDELINES = """# Support guidelines

- **R1**: a sentence is supported only when a document says it,
  not when it merely follows from common knowledge.
- **R2**: hedged sentences count as unsupported.

## R10. Numbers must match exactly.
"""


def test_rules_are_parsed_from_markdown():
    assert parse_rules(GUIDELINES) == {
        "R1": "a sentence is supported only when a document says it, not when it merely "
        "follows from common knowledge.",
        "R2": "hedged sentences count as unsupported.",
        "R10": "Numbers must match exactly.",
    }
    assert parse_rules("no rules here\n\nR-x: not an id") == {}


@pytest.fixture
def dataset(tmp_path):
    path = write_jsonl(tmp_path / "res.jsonl", [trace_record(f"t{i}") for i in range(1, 5)])
    rules = tmp_path / "guidelines.md"
    rules.write_text(GUIDELINES, encoding="utf-8")
    quick("import", str(path))
    return path, rules


def _rules_of(path, rid):
    db = open_database(path.with_suffix(".ragreview.db"))
    try:
        return guidelines.label_rules(db, store_records.find(db, rid).rowid)
    finally:
        db.conn.close()


def test_label_rule_survives_undo_redo_and_reaches_the_exports(dataset, tmp_path):
    path, rules = dataset
    p = str(path)
    bad = run("label", p, "t1", "supported", "a", "false", "--rule", "R1", check=False)
    assert bad.returncode == 1 and "no guidelines" in bad.stderr
    assert "3 rules (R1, R2, R10)" in run("guidelines", p, str(rules)).stdout
    assert json.loads(run("guidelines", p, "--json").stdout)["R2"].startswith("hedged")
    unknown = run("label", p, "t1", "supported", "a", "false", "--rule", "R9", check=False)
    assert unknown.returncode == 1 and "no rule 'R9'" in unknown.stderr

    quick("label", p, "t1", "supported", "a", "false", "--rule", "R1", "--reviewer", "ann",
          "--reason", "common knowledge only")  # fmt: skip
    quick("label", p, "t1", "supported", "a", "true", "--rule", "R2", "--reviewer", "ann")
    assert _rules_of(path, "t1") == {("supported", "a"): "R2"}
    quick("undo", p, "--reviewer", "ann")
    assert _rules_of(path, "t1") == {("supported", "a"): "R1"}  # back with its value
    quick("redo", p, "--reviewer", "ann")
    assert _rules_of(path, "t1") == {("supported", "a"): "R2"}
    quick("undo", p, "--reviewer", "ann")
    log = [json.loads(x) for x in run("log", p, "--record", "t1", "--json").stdout.splitlines()]
    assert [(e["kind"], e["rule"]) for e in log] == [
        ("set", "R1"), ("set", "R2"), ("undo", "R1"), ("redo", "R2"), ("undo", "R1")
    ]  # fmt: skip
    assert "[rule R1]" in run("log", p, "--record", "t1").stdout

    pack = tmp_path / "pack.jsonl"
    run("export", p, "--as", "disagreements", "--out", str(pack))
    (item,) = [json.loads(line) for line in pack.read_text(encoding="utf-8").splitlines()]
    assert item["rule"] == {"id": "R1", "text": parse_rules(GUIDELINES)["R1"]}
    few = tmp_path / "few.jsonl"
    run("export", p, "--as", "fewshot", "--out", str(few))
    (line,) = [json.loads(x) for x in few.read_text(encoding="utf-8").splitlines()]
    assert line["rule"] == item["rule"]
    mlflow = tmp_path / "mlflow.jsonl"
    run("export", p, "--as", "mlflow-assessments", "--out", str(mlflow))
    (a,) = [json.loads(x) for x in mlflow.read_text(encoding="utf-8").splitlines()]
    assert a["metadata"]["ragreview.rule"] == "R1"

    # the align examples carry the rule's text
    quick("mark", p, "t1", "--reviewed")
    db = open_database(path.with_suffix(".ragreview.db"))
    stored = list(store_records.iterate(db, "res", status="reviewed"))
    (found,) = corrections(db, stored, {"supported"})
    db.conn.close()
    assert (found.rule, found.reason) == ("R1", "common knowledge only")
    text = example_text(1, found, stored[0].record)
    assert "Guideline rule: R1 (a sentence is supported only when a document says it" in text


def test_agreement_per_rule_matches_hand_counts(dataset):
    path, rules = dataset
    p = str(path)
    run("guidelines", p, str(rules))
    # the judge says every response sentence is supported
    quick("label", p, "t1", "supported", "a", "false", "--rule", "R1")
    quick("label", p, "t2", "supported", "a", "false", "--rule", "R1")
    quick("label", p, "t3", "supported", "a", "true", "--rule", "R1")  # R1 confirms the judge
    quick("label", p, "t1", "supported", "b", "false", "--rule", "R2")
    quick("label", p, "t4", "supported", "b", "false")  # no rule named
    for i in range(1, 5):
        quick("mark", p, f"t{i}", "--reviewed")
    report = json.loads(run("agreement", p, "--json").stdout)
    r1 = report["by_rule"]["R1"]
    assert r1["text"].startswith("a sentence is supported") and r1["items"] == 3
    s = r1["labels"]["supported"]
    # (judge, human): (T,F) (T,F) (T,T): tp 1, fp 2; accuracy 1/3, TPR 1, TNR 0/2 = 0;
    # κ: p_o 1/3, p_e = 1 · 1/3 = 1/3 -> 0
    assert s["confusion"] == {"tp": 1, "fp": 2, "fn": 0, "tn": 0}
    assert s["accuracy"] == pytest.approx(1 / 3) and s["tpr"] == 1 and s["tnr"] == 0
    assert s["kappa"] == pytest.approx(0)
    r2 = report["by_rule"]["R2"]["labels"]["supported"]
    assert r2["confusion"] == {"tp": 0, "fp": 1, "fn": 0, "tn": 0}
    assert r2["accuracy"] == 0 and r2["tpr"] is None  # undefined, not 0
    assert set(report["by_rule"]) == {"R1", "R2"}
    assert "Per guideline rule" in run("agreement", p).stdout


def test_merge_keeps_the_rule_the_reviewers_agreed_on(tmp_path):
    path = write_jsonl(tmp_path / "res.jsonl", [trace_record("t1"), trace_record("t2")])
    rules = tmp_path / "g.md"
    rules.write_text(GUIDELINES, encoding="utf-8")
    dbs = [tmp_path / f"{who}.db" for who in ("ann", "bob")]
    for who, db in zip(("ann", "bob"), dbs):
        quick("import", str(path), "--db", str(db))
        run("guidelines", str(db), str(rules))
        quick("label", str(db), "t1", "supported", "a", "false", "--rule", "R1",
              "--reviewer", who)  # fmt: skip
        # the same value on t2, under different rules: the merge names none
        quick("label", str(db), "t2", "supported", "b", "false", "--rule",
              "R1" if who == "ann" else "R2", "--reviewer", who)  # fmt: skip
        for rid in ("t1", "t2"):
            quick("mark", str(db), rid, "--reviewed", "--reviewer", who)
    into = tmp_path / "merged.db"
    run("merge", *map(str, dbs), "--into", str(into))
    db = open_database(into)
    try:
        assert guidelines.label_rules(db, store_records.find(db, "t1").rowid) == {
            ("supported", "a"): "R1"
        }
        assert guidelines.label_rules(db, store_records.find(db, "t2").rowid) == {}
        assert store_records.find(db, "t2").human == {"supported": {"b": False}}
        assert guidelines.rules(db, "res")["R2"].startswith("hedged")
    finally:
        db.conn.close()
    # and on into the merged file's export
    out = tmp_path / "merged.jsonl"
    run("export", str(into), "--as", "ragreview", "--out", str(out))
    lines = {o["id"]: o for o in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert lines["t1"]["labels"]["rules"] == {"supported": {"a": "R1"}}
    assert "rules" not in lines["t2"]["labels"]


def test_ragas_annotation_carries_the_rule_in_the_edited_reason(dataset, tmp_path):
    path, rules = dataset
    p = str(path)
    run("guidelines", p, str(rules))
    quick("label", p, "t1", "supported", "a", "false", "--rule", "R2", "--reason", "hedged")
    quick("label", p, "t2", "supported", "b", "false", "--rule", "R10")  # no reason given
    quick("label", p, "t3", "supported", "a", "false", "--reason", "no rule named")
    out = tmp_path / "ann.json"
    run("export", p, "--as", "ragas-annotation", "--out", str(out))
    doc = json.loads(out.read_text(encoding="utf-8"))
    given = []
    for sample in doc["supported"]:
        # only the fields of ragas.dataset_schema's SampleAnnotation / PromptAnnotation
        assert set(sample) <= {"metric_input", "metric_output", "prompts", "is_accepted", "target"}
        (prompt,) = sample["prompts"].values()
        assert set(prompt) <= {"prompt_input", "prompt_output", "is_accepted", "edited_output"}
        given.append(prompt["edited_output"]["reason"])
    texts = parse_rules(GUIDELINES)
    assert sorted(given, key=str) == sorted(
        [
            f"hedged\nGuideline rule: R2 ({texts['R2']})",
            f"Guideline rule: R10 ({texts['R10']})",
            "no rule named",
        ],
        key=str,
    )


def test_native_export_carries_the_rules_and_reimports_them_equal(dataset, tmp_path):
    path, rules = dataset
    p = str(path)
    run("guidelines", p, str(rules))
    quick("label", p, "t1", "supported", "a", "false", "--rule", "R1", "--reviewer", "ann")
    quick("label", p, "t1", "supported", "a", "false", "--rule", "R2", "--reviewer", "ann")
    quick("undo", p, "--reviewer", "ann")  # back to R1, the value unchanged
    quick("label", p, "t2", "supported", "b", "false", "--rule", "R10")
    quick("label", p, "t3", "relevant", "0b", "true")  # no rule
    out = tmp_path / "native.jsonl"
    run("export", p, "--as", "ragreview", "--out", str(out))
    lines = {o["id"]: o for o in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert lines["t1"]["labels"]["rules"] == {"supported": {"a": "R1"}}
    assert lines["t2"]["labels"]["rules"] == {"supported": {"b": "R10"}}
    assert "rules" not in lines["t3"]["labels"] and "rules" not in lines["t4"]["labels"]

    again = tmp_path / "again.db"
    quick("import", str(out), "--db", str(again))
    db, db2 = open_database(path.with_suffix(".ragreview.db")), open_database(again)
    try:
        for rid in ("t1", "t2", "t3", "t4"):
            first, second = store_records.find(db, rid), store_records.find(db2, rid)
            assert second.human == first.human
            assert guidelines.label_rules(db2, second.rowid) == guidelines.label_rules(
                db, first.rowid
            )
        assert guidelines.label_rules(db2, store_records.find(db2, "t1").rowid) == {
            ("supported", "a"): "R1"
        }
    finally:
        db.conn.close()
        db2.conn.close()


def test_native_rules_that_tag_nothing_are_refused_by_line_and_field(tmp_path):
    good = trace_record("t1")
    good["labels"]["human"] = {"supported": {"a": False}}
    good["labels"]["rules"] = {"supported": {"a.": "R1"}}  # a key as written: "a"
    stray = trace_record("t2")
    stray["labels"]["rules"] = {"supported": {"a": "R1"}}  # no human value to tag
    bad_id = trace_record("t3")
    bad_id["labels"]["human"] = {"supported": {"a": False}}
    bad_id["labels"]["rules"] = {"supported": {"a": "rule one"}}
    path = write_jsonl(tmp_path / "res.jsonl", [good, stray, bad_id])
    result = run("import", str(path), check=False)
    assert "res.jsonl:2: labels.rules.supported.a: names a rule for no value" in result.stderr
    assert "no value in labels.human" in result.stderr
    assert "res.jsonl:3: labels.rules.supported.a: expected a rule id such as R3" in result.stderr
    assert "Traceback" not in result.stderr
    db = open_database(path.with_suffix(".ragreview.db"))
    try:  # the valid record still imports, with its rule
        assert guidelines.label_rules(db, store_records.find(db, "t1").rowid) == {
            ("supported", "a"): "R1"
        }
    finally:
        db.conn.close()


def test_a_metric_annotation_file_written_back_carries_the_rule_as_the_edited_reason(tmp_path):
    source = tmp_path / "annotated_data.json"
    shutil.copy(ROOT / "fixtures" / "ragas" / "annotated_data.json", source)
    rules = tmp_path / "g.md"
    rules.write_text(GUIDELINES, encoding="utf-8")
    p = str(source)
    quick("import", p)
    run("guidelines", p, str(rules))
    quick("label", p, "1", "verdict", "*", "false", "--rule", "R2")  # the judge said 1
    out = tmp_path / "back.json"
    run("export", p, "--out", str(out))
    doc = json.loads(out.read_text(encoding="utf-8"))
    original = json.loads(source.read_text(encoding="utf-8"))
    prompt = doc["helpfulness"][0]["prompts"]["single_turn_aspect_critic_prompt"]
    assert prompt["edited_output"]["verdict"] == 0
    assert prompt["edited_output"]["reason"] == (
        "Guideline rule: R2 (hedged sentences count as unsupported.)"
    )
    assert set(prompt) <= {"prompt_input", "prompt_output", "is_accepted", "edited_output"}
    assert doc["helpfulness"][1:] == original["helpfulness"][1:]
    # the verdict comes back as exported
    again = tmp_path / "again.db"
    quick("import", str(out), "--db", str(again))
    db = open_database(again)
    try:
        assert store_records.find(db, "1").human == {"verdict": {"*": False}}
    finally:
        db.conn.close()
