"""DeepEval test runs (fixtures/deepeval/runs, written by DeepEval 4.3.1 itself through
``fixtures/deepeval/make_runs.py``): the four file forms, the verdicts read from
``verboseLogs``, the five metrics recomputed exactly as DeepEval's ``_calculate_score``
(``metrics/utils/qag.py: score_qag_verdicts``; contextual_precision's own), and
``export --as source``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ragreview.core import deepeval_logs as logs
from ragreview.formats import detect
from ragreview.store import open_database

from .helpers import FIXTURES, run

RUNS = FIXTURES / "deepeval" / "runs"
VERDICTS = RUNS / "test_run_verdicts.json"
FORMS = [
    VERDICTS,
    RUNS / "verdicts.latest_test_run.json",  # {"testRunData": …}
    RUNS / "verdicts.latest_run_full.json",
    RUNS / "verdicts.temp_test_run_data.json",
    RUNS / "test_run_legacy_idk.json",  # "idk" as DeepEval wrote it before "borderline"
]
SLUGS = {
    "Faithfulness": "faithfulness",
    "Answer Relevancy": "answer_relevancy",
    "Contextual Relevancy": "contextual_relevancy",
    "Contextual Precision": "contextual_precision",
    "Contextual Recall": "contextual_recall",
}


def imported(source: Path, tmp_path: Path) -> tuple[Path, Path]:
    copy = tmp_path / source.name
    shutil.copy(source, copy)
    result = run("import", copy, "--strict")
    assert result.exit_code == 0, result.output
    return copy, copy.with_name(copy.stem + ".ragreview.db")


def per_record(path: Path) -> dict[str, dict[str, Any]]:
    result = run("metrics", path, "--per-record", "--json")
    assert result.exit_code == 0, result.output
    return {row["id"]: row for row in map(json.loads, result.output.splitlines())}


def cases(path: Path) -> list[dict[str, Any]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return doc.get("testRunData", doc)["testCases"]


def labels(db_path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    db = open_database(db_path)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for rid, name, target, value in db.conn.execute(
        "SELECT r.id, j.name, j.target, j.value FROM judge_labels j "
        "JOIN records r ON r.rowid = j.record"
    ):
        out.setdefault(rid, {}).setdefault(name, {})[target] = json.loads(value)
    db.conn.close()
    return out


@pytest.mark.parametrize("source", FORMS, ids=lambda p: p.name)
def test_every_form_is_detected_and_gives_every_stored_score_exactly(
    source: Path, tmp_path: Path
) -> None:
    assert detect(source) == "deepeval"
    copy, _ = imported(source, tmp_path)
    values = per_record(copy)
    compared = 0
    for case in cases(source):
        row = values[case["name"]]
        for metric in case["metricsData"]:
            slug = SLUGS.get(metric["name"])
            if slug is None or "verboseLogs" not in metric:
                continue
            assert row["judge"][f"deepeval.{slug}"] == metric["score"], (case["name"], slug)
            compared += 1
    assert compared == 10  # 2 test cases x 5 verdict metrics
    # the stored-vs-recomputed table: every recomputed metric, no disagreement; the
    # custom metric without verdicts is not recomputed, so not in it
    table = run("metrics", copy).output.split("stored scores in the source")[1]
    for slug in SLUGS.values():
        (line,) = [x for x in table.splitlines() if f"deepeval.{slug} " in x]
        assert [c.strip() for c in line.split("│")[2:4]] == ["2", "0"], line
    assert "conciseness" not in table


def test_the_four_forms_give_the_same_records_and_verdicts(tmp_path: Path) -> None:
    found = []
    for i, source in enumerate(FORMS):
        folder = tmp_path / str(i)
        folder.mkdir()
        _, db = imported(source, folder)
        found.append(labels(db))
    assert all(layer == found[0] for layer in found)
    capital = found[0]["capital"]
    assert capital["deepeval_claim"] == {"cl1": "yes", "cl2": "no", "cl3": "idk"}
    assert capital["deepeval_statement"] == {"as1": "yes", "as2": "idk", "as3": "no"}
    assert capital["deepeval_context_statement"] == {
        "n0s1": "yes",
        "n0s2": "no",
        "n1s1": "no",
        "n2s1": "yes",
    }
    assert capital["deepeval_node"] == {"c0": "yes", "c1": "no", "c2": "yes"}
    assert capital["deepeval_expected"] == {"e1": "yes", "e2": "no", "e3": "yes"}
    # an empty statement list (Answer Relevancy) and an empty per-node list
    assert "deepeval_statement" not in found[0]["everest"]
    assert found[0]["everest"]["deepeval_context_statement"] == {"n0s1": "yes"}


def test_the_record_holds_question_nodes_response_and_reference(tmp_path: Path) -> None:
    _, db_path = imported(VERDICTS, tmp_path)
    db = open_database(db_path)
    (data,) = db.conn.execute("SELECT data FROM records WHERE id = 'capital'").fetchone()
    db.conn.close()
    rec = json.loads(data)
    case = cases(VERDICTS)[0]
    assert rec["question"] == case["input"]
    assert [d["sentences"] for d in rec["documents"]] == [
        [[f"{i}a", node]] for i, node in enumerate(case["retrievalContext"])
    ]
    assert " ".join(t for _, t in rec["response"]) == case["actualOutput"]
    assert rec["references"] == [case["expectedOutput"]]
    claims = rec["deepeval"]["items"]["claim"]
    assert [c[1] for c in claims] == [
        "Paris is the capital of France.",
        "Paris has 5 million inhabitants.",
        "Paris is the most visited city in Europe.",
    ]
    assert rec["deepeval"]["truths"][1] == "Paris has about 2.1 million inhabitants."
    # a node statement says which node it is about
    assert rec["deepeval"]["items"]["context_statement"][2] == [
        "n1s1",
        "Lyon is known for its cuisine.",
        "node 1",
    ]


def test_edges_error_none_and_strict_mode(tmp_path: Path) -> None:
    copy, _ = imported(RUNS / "test_run_edges.json", tmp_path)
    values = per_record(copy)["capital"]["judge"]
    assert values["deepeval.faithfulness"] == 0.0  # 2/3 under strictMode's threshold 1
    assert values["deepeval.answer_relevancy"] is None  # error, no score
    assert values["deepeval.unfinished_check"] is None  # neither score nor error
    summary = json.loads(run("metrics", copy, "--json").output.splitlines()[0])
    assert summary["undefined"]["judge"]["deepeval.answer_relevancy"] == 2
    assert summary["judge"].get("deepeval.answer_relevancy") is None  # never averaged as 0
    # both strict test cases: unclamped they would be 2/3
    assert summary["judge"]["deepeval.faithfulness"] == 0.0
    # strict: at the threshold (all claims pass) the score is not clamped
    for target in ("cl2", "cl3"):
        assert run("label", copy, "capital", "deepeval_claim", target, "yes").exit_code == 0
    assert per_record(copy)["capital"]["effective"]["deepeval.faithfulness"] == 1.0


# one override per label kind: (label, target, value, metric, judge value, reviewed value)
OVERRIDES = [
    ("deepeval_claim", "cl3", "no", "faithfulness", 2 / 3, 1 / 3),
    ("deepeval_statement", "as2", "no", "answer_relevancy", 2 / 3, 1 / 3),
    ("deepeval_context_statement", "n0s2", "yes", "contextual_relevancy", 2 / 4, 3 / 4),
    # ranks yes, no, yes: (1/1 + 2/3) / 2; all three relevant: (1 + 1 + 1) / 3
    ("deepeval_node", "c1", "yes", "contextual_precision", (1 + 2 / 3) / 2, 1.0),
    ("deepeval_expected", "e2", "yes", "contextual_recall", 2 / 3, 1.0),
]


@pytest.mark.parametrize("label, target, value, metric, before, after", OVERRIDES)
def test_one_override_moves_its_metric_by_the_hand_computed_amount(
    tmp_path: Path, label: str, target: str, value: str, metric: str, before: float, after: float
) -> None:
    copy, _ = imported(VERDICTS, tmp_path)
    judge = per_record(copy)["capital"]["judge"]
    assert judge[f"deepeval.{metric}"] == pytest.approx(before, abs=1e-15)
    assert run("label", copy, "capital", label, target, value).exit_code == 0
    reviewed = per_record(copy)["capital"]["effective"]
    for name, was in judge.items():
        want = after if name == f"deepeval.{metric}" else was
        assert reviewed[name] == pytest.approx(want, abs=1e-15), name


def test_penalize_ambiguous_claims_is_an_assumed_setting(tmp_path: Path) -> None:
    copy, _ = imported(VERDICTS, tmp_path)
    shown = run("metrics", copy).output
    assert "deepeval.penalize_ambiguous_claims = false is assumed" in shown
    ok = run("settings", copy, "deepeval.penalize_ambiguous_claims=true")
    assert ok.exit_code == 0, ok.output
    # yes, no, idk: (2 - 1) / 3 with the idk penalised
    assert per_record(copy)["capital"]["judge"]["deepeval.faithfulness"] == 1 / 3
    assert "is assumed" not in run("metrics", copy).output


def test_an_unchanged_export_is_the_file_byte_for_byte(tmp_path: Path) -> None:
    for source in (VERDICTS, RUNS / "verdicts.latest_test_run.json"):
        copy, _ = imported(source, tmp_path)
        out = tmp_path / f"out-{source.name}"
        assert run("export", copy, "--out", out).exit_code == 0
        assert out.read_bytes() == source.read_bytes()


def test_verdict_steps_are_printed_as_deepeval_prints_them() -> None:
    """Re-printing every verdict list of every fixture gives DeepEval's own text: the
    writer changes a verdict word and nothing else of the log."""
    seen = 0
    for source in sorted(RUNS.glob("*.json")):
        for case in cases(source):
            for metric in case["metricsData"]:
                text = metric.get("verboseLogs")
                if not text:
                    continue
                verdicts = logs.objects(logs.steps(text)["Verdicts"])
                assert verdicts is not None
                assert logs.replace_verdicts(text, verdicts) == text
                seen += 1
    assert seen >= 20


def test_export_writes_verdicts_scores_success_and_the_reviewers_reason(tmp_path: Path) -> None:
    copy, db = imported(VERDICTS, tmp_path)
    before = labels(db)
    for args in (
        ("deepeval_claim", "cl3", "no", "--reason", "no source gives visitor numbers"),
        ("deepeval_node", "c1", "yes"),
        ("deepeval_expected", "e2", "yes"),
        ("deepeval_statement", "as2", "no"),
        ("deepeval_context_statement", "n0s2", "yes"),
    ):
        assert run("label", copy, "capital", *args).exit_code == 0
    out = tmp_path / "exported.json"
    result = run("export", copy, "--out", out)
    assert result.exit_code == 0, result.output
    old, new = cases(VERDICTS), cases(out)
    assert new[1] == old[1]  # the other test case as it was
    faith = new[0]["metricsData"][0]
    assert faith["score"] == 1 / 3 and faith["success"] is False
    assert faith["reason"] == "cl3: no source gives visitor numbers"
    assert faith["judgeReason"] == old[0]["metricsData"][0]["reason"]
    verdicts = logs.objects(logs.steps(faith["verboseLogs"])["Verdicts"])
    assert [v["verdict"] for v in verdicts] == ["yes", "no", "no"]
    assert verdicts[2]["reason"] == "The context says nothing about visitor numbers."
    # the other steps (truths, claims) as DeepEval wrote them
    old_steps = logs.steps(old[0]["metricsData"][0]["verboseLogs"])
    new_steps = logs.steps(faith["verboseLogs"])
    assert {k: v for k, v in new_steps.items() if k != "Verdicts"} == {
        k: v for k, v in old_steps.items() if k != "Verdicts"
    }
    precision = new[0]["metricsData"][3]
    assert precision["score"] == 1.0 and precision["success"] is True
    relevancy = new[0]["metricsData"][1]
    answer = logs.objects(logs.steps(relevancy["verboseLogs"])["Verdicts"])
    assert [v["verdict"] for v in answer] == ["yes", "no", "no"]
    assert relevancy["score"] == 1 / 3 and relevancy["success"] is False
    # a borderline verdict left alone keeps DeepEval's spelling
    unchanged = logs.objects(logs.steps(old[0]["metricsData"][1]["verboseLogs"])["Verdicts"])
    assert unchanged[1]["verdict"] == "borderline"
    run_doc = json.loads(out.read_text())
    scores = {m["metric"]: m for m in run_doc["metricsScores"]}
    assert scores["Contextual Precision"]["scores"] == [1.0, 0.5]
    assert scores["Answer Relevancy"]["passes"] == 1 and scores["Answer Relevancy"]["fails"] == 1
    # re-imported: the reviewed labels are the new file's judge labels
    again = tmp_path / "again"
    again.mkdir()
    _, db2 = imported(out, again)
    reviewed = labels(db2)["capital"]
    assert reviewed["deepeval_claim"] == {**before["capital"]["deepeval_claim"], "cl3": "no"}
    assert reviewed["deepeval_node"]["c1"] == "yes"
    assert reviewed["deepeval_expected"]["e2"] == "yes"
    assert reviewed["deepeval_statement"]["as2"] == "no"
    assert reviewed["deepeval_context_statement"]["n0s2"] == "yes"
    assert per_record(again / out.name)["capital"]["judge"]["deepeval.faithfulness"] == 1 / 3


def test_formats_lists_deepeval() -> None:
    result = run("formats")
    assert result.exit_code == 0
    assert "deepeval" in result.output


def test_agreement_per_label_and_metric_and_the_queue_estimate(tmp_path: Path) -> None:
    copy, _ = imported(VERDICTS, tmp_path)
    assert run("label", copy, "capital", "deepeval_node", "c1", "yes").exit_code == 0
    drawn = run("queue", copy, "--n", "2")
    assert drawn.exit_code == 0, drawn.output
    for rid in ("capital", "everest"):
        assert run("mark", copy, rid, "--reviewed").exit_code == 0
    result = run("agreement", copy, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    text = json.dumps(report)
    for name in (
        "deepeval_claim",
        "deepeval_statement",
        "deepeval_context_statement",
        "deepeval_node",
        "deepeval_expected",
        "deepeval.contextual_precision",
    ):
        assert f'"{name}"' in text, name
    summary = json.loads(run("metrics", copy, "--json").output.splitlines()[0])
    estimate = summary["estimate"]
    found = json.dumps(estimate)
    assert "deepeval.contextual_precision" in found
    # every record reviewed: the estimate is the reviewed mean, (1.0 + 0.5) / 2
    assert summary["effective"]["deepeval.contextual_precision"] == 0.75


@pytest.mark.parametrize("word", ["maybe", "idk"])
def test_logs_read_unescaped_strings_and_skip_unknown_verdicts(tmp_path: Path, word: str) -> None:
    # prettify_list prints strings without escaping them
    body = '[\n    "He said "yes" twice.",\n    "C:\\\\path"\n]'
    assert logs.strings(body) == ['He said "yes" twice.', "C:\\\\path"]
    assert logs.strings("[]") == []
    doc = json.loads(VERDICTS.read_text(encoding="utf-8"))
    metric = doc["testCases"][0]["metricsData"][3]  # Contextual Precision
    metric["verboseLogs"] = metric["verboseLogs"].replace('"verdict": "no"', f'"verdict": "{word}"')
    odd = tmp_path / "in" / "odd.json"
    odd.parent.mkdir()
    odd.write_text(json.dumps(doc), encoding="utf-8")
    copy, db = imported(odd, tmp_path)
    found = labels(db)["capital"]
    # a verdict DeepEval would drop (idk: Contextual Precision's schema is yes / no):
    # the metric keeps its stored score only
    assert "deepeval_node" not in found
    values = per_record(copy)["capital"]["judge"]
    assert values["deepeval.contextual_precision"] == metric["score"]


def test_reviewed_only_export_recounts_the_run(tmp_path: Path) -> None:
    copy, _ = imported(VERDICTS, tmp_path)
    assert run("label", copy, "everest", "deepeval_expected", "e2", "yes").exit_code == 0
    assert run("mark", copy, "everest", "--reviewed").exit_code == 0
    out = tmp_path / "reviewed.json"
    result = run("export", copy, "--out", out, "--reviewed-only")
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert [c["name"] for c in doc["testCases"]] == ["everest"]
    assert doc["testPassed"] + doc["testFailed"] == 1
    scores = {m["metric"]: m for m in doc["metricsScores"]}
    assert scores["Contextual Recall"]["scores"] == [1.0]
    assert scores["Faithfulness"] == {
        "metric": "Faithfulness",
        "scores": [2 / 3],
        "passes": 0,
        "fails": 1,
        "errors": 0,
    }


def test_deepevals_own_loader_reads_the_export(tmp_path: Path) -> None:
    """Needs an interpreter with the ``deepeval`` package (never the project's venv):
    ``DEEPEVAL_PYTHON=/path/to/venv/bin/python``; skipped without one."""
    import os
    import subprocess

    python = os.environ.get("DEEPEVAL_PYTHON")
    if not python:
        pytest.skip("set DEEPEVAL_PYTHON to an interpreter that has deepeval")
    copy, _ = imported(VERDICTS, tmp_path)
    for args in (
        ("deepeval_claim", "cl1", "idk"),
        ("deepeval_node", "c1", "yes"),
        ("deepeval_context_statement", "n1s1", "yes"),
    ):
        assert run("label", copy, "capital", *args).exit_code == 0
    out = tmp_path / "exported.json"
    assert run("export", copy, "--out", out).exit_code == 0
    check = FIXTURES / "deepeval" / "check_export.py"
    env = {**os.environ, "DEEPEVAL_TELEMETRY_OPT_OUT": "1"}
    done = subprocess.run(
        [python, str(check), str(out)], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "capital Faithfulness 0.6666666666666666 False" in done.stdout
    assert "capital Contextual Precision 1.0 True" in done.stdout
