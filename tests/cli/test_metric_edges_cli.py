"""The metric edges end to end: real files imported into a real DB, read back through
``metrics --json`` / ``--per-record --json``, against values worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragreview.cli import cli
from ragreview.store import metric_summary_reads, open_database

ROOT = Path(__file__).resolve().parents[2]
SHARED_RGB = ROOT.parent / "shared" / "fixtures" / "rgb"
HAND_RGB = ROOT / "fixtures" / "handwritten" / "rgb"


def _cli(*args: object) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def summary(db: Path) -> dict:
    (line,) = _cli("metrics", db, "--json").splitlines()
    return json.loads(line)


def per_record(db: Path) -> dict[str, dict]:
    lines = _cli("metrics", db, "--per-record", "--json").splitlines()
    return {row["id"]: row for row in map(json.loads, lines)}


def imported(tmp_path: Path, source: Path) -> Path:
    db = tmp_path / f"{source.stem}.ragreview.db"
    _cli("import", source, "--db", db)
    return db


# -- nothing to score: null, shown –, counted ------------------------------------------


def test_mtrag_task_inputs_have_no_metric(tmp_path):
    db = imported(tmp_path, ROOT / "fixtures" / "mtrag" / "taskb_input.jsonl")
    obj = summary(db)
    assert obj["judge"]["mtrag.length"] is None  # was 0.0
    assert obj["judge"]["mtrag.extractiveness"] is None  # was 0.0 for turns with contexts
    assert set(obj["judge"].values()) == {None}
    assert set(obj["undefined"]["judge"].values()) == {10}
    for row in per_record(db).values():
        assert set(row["judge"].values()) == {None}
    table = _cli("metrics", db)
    assert "mtrag.length" in table and "–" in table and "undefined" in table


@pytest.mark.skipif(not SHARED_RGB.is_dir(), reason="RGB data (non-commercial) not present")
def test_rgb_data_file_without_predictions_has_no_metric(tmp_path):
    db = imported(tmp_path, SHARED_RGB / "en_fact.json")
    obj = summary(db)
    assert obj["judge"]["rgb.accuracy"] is None and obj["judge"]["rgb.correct"] is None
    assert obj["judge"]["rgb.error_correction_rate"] is None
    assert obj["undefined"]["judge"]["rgb.correct"] == 100


# -- MT-RAG evaluation output at the edges ---------------------------------------------


def mtrag_eval_row(task_id: str, contexts: list[str], answerability: str, metrics: dict) -> dict:
    return {
        "conversation_id": "c",
        "task_id": task_id,
        "input": [{"speaker": "user", "text": "where do cats sit?"}],
        "contexts": [{"document_id": str(i), "text": t} for i, t in enumerate(contexts)],
        "targets": [{"speaker": "agent", "text": "the cat sat on the mat"}],
        "predictions": [{"text": "the cat sat"}],
        "answerability": [answerability],
        "metrics": metrics,
    }


def test_mtrag_edges_through_import_and_review(tmp_path):
    rows = [
        # a turn with no contexts: no BertKPrec, so RB_agg is 0 (run_algorithmic.rb_agg)
        mtrag_eval_row(
            "c::1",
            [],
            "ANSWERABLE",
            {"BertscoreR": [0.4], "RB_agg": [0], "RB_llm": [0.7], "idk_eval": [0]},
        ),
        # HEAD pipeline: underspecified_eval present -> get_idk_underspec_score
        mtrag_eval_row(
            "c::2",
            ["Cats sit on mats."],
            "UNDERSPECIFIED",
            {"RB_llm": [0.7], "idk_eval": [0], "underspecified_eval": [0.5]},
        ),
        # older pipeline: no underspecified_eval -> get_idk_score keeps the raw metric
        mtrag_eval_row(
            "c::3", ["Cats sit on mats."], "UNDERSPECIFIED", {"RB_llm": [0.7], "idk_eval": [0]}
        ),
    ]
    path = tmp_path / "eval.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = imported(tmp_path, path)
    _cli("label", db, "c::1", "rb_llm_rating", "*", "9", "--reviewer", "ann")
    got = per_record(db)
    one = got["c::1"]
    assert one["judge"]["mtrag.rb_agg"] == 0.0 and one["judge"]["mtrag.extractiveness"] is None
    assert one["judge"]["mtrag.rb_llm"] == 0.7 and one["effective"]["mtrag.rb_llm"] == 0.9
    assert one["effective"]["mtrag.rb_llm_idk"] == 0.9  # answerable, idk 0: raw metric
    assert got["c::2"]["judge"]["mtrag.rb_llm_idk"] == 0.0
    assert got["c::3"]["judge"]["mtrag.rb_llm_idk"] == 0.7
    obj = summary(db)
    assert obj["judge"]["mtrag.rb_llm_idk"] == pytest.approx((0.7 + 0.0 + 0.7) / 3)
    assert obj["effective"]["mtrag.rb_llm_idk"] == pytest.approx((0.9 + 0.0 + 0.7) / 3)
    # the stored RB_agg of the no-context turn agrees with the recomputation
    database = open_database(db)
    compared = metric_summary_reads.stored_comparison(database, "eval")["mtrag.rb_agg"]
    database.conn.close()
    assert (compared["n"], compared["disagree"]) == (1, 0)


def test_mtrag_stored_bert_k_prec_and_rb_llm_as_the_scripts_use_them(tmp_path):
    """follows mt-rag-benchmark scripts/evaluation/run_algorithmic.py rb_agg (BertKPrec
    used whenever the key exists: files store [0.0] on turns without contexts) and
    judge_wrapper.py get_idk_score (RB_llm read as stored, 0 stays 0), through import,
    the stored-vs-recomputed table and a reviewer's answerability override."""
    # recall (0.6+1)/2 = 4/5, rougeL("the cat sat", target) = 2/3, extractiveness
    # (0+1)/2 = 1/2: 3·(4/5)(2/3)(1/2) / ((4/5)(2/3) + (4/5)(1/2) + (2/3)(1/2)) = 12/19
    rb_agg = 12 / 19
    metrics = {"BertscoreR": [0.6], "BertKPrec": [0.0], "RB_agg": [rb_agg], "RB_llm": [0]}
    metrics.update(idk_eval=[0], RB_agg_idk=[0], RB_llm_idk=[0])
    path = tmp_path / "eval.jsonl"
    path.write_text(json.dumps(mtrag_eval_row("c::9", [], "UNANSWERABLE", metrics)) + "\n")
    db = imported(tmp_path, path)
    judge = per_record(db)["c::9"]["judge"]
    assert judge["mtrag.rb_agg"] == pytest.approx(rb_agg, abs=1e-15)
    assert judge["mtrag.rb_llm"] == 0.0  # not extract_rating's 0.5
    assert judge["mtrag.rb_agg_idk"] == 0.0 and judge["mtrag.rb_llm_idk"] == 0.0
    database = open_database(db)
    compared = metric_summary_reads.stored_comparison(database, "eval")
    database.conn.close()
    for name in ("mtrag.rb_agg", "mtrag.rb_llm", "mtrag.rb_agg_idk", "mtrag.rb_llm_idk"):
        assert (compared[name]["n"], compared[name]["disagree"]) == (1, 0), name
    _cli("label", db, "c::9", "answerability", "*", "ANSWERABLE", "--reviewer", "ann")
    effective = per_record(db)["c::9"]["effective"]
    # answerable, idk_eval 0: get_idk_score returns the raw metrics
    assert effective["mtrag.rb_agg_idk"] == pytest.approx(rb_agg, abs=1e-15)
    assert effective["mtrag.rb_llm_idk"] == 0.0


# -- RGB judge-script output: each script's own rates ----------------------------------


def test_rgb_reject_evalue_file_reports_both_scripts_rates(tmp_path):
    """follows chen700564/RGB evalue.py (all_rate at noise 1: label [-1] or correct) and
    reject_evalue.py (reject_rate = #'not addressed' in evaluation / n; all_rate =
    #(0 not in label and 1 in label) / n), never mixed. The _chatgpt file: 0 label
    [-1] + 'not addressed', 1 [1] + addressed, 2 [0] + addressed."""
    db = imported(
        tmp_path,
        HAND_RGB / "prediction_en_ModelX_temp0.7_noise1.0_passage5_correct0.0_chatgpt.json",
    )
    obj = summary(db)
    assert obj["judge"]["rgb.rejection_rate"] == pytest.approx(2 / 3)  # evalue.py
    assert obj["judge"]["rgb.reject_evalue.rejection_rate"] == pytest.approx(1 / 3)
    assert obj["judge"]["rgb.reject_evalue.accuracy"] == pytest.approx(1 / 3)
    # the LLM's verdict moves reject_evalue.py's rate only; evalue.py's label, its own
    _cli("label", db, "2", "not_addressed", "*", "true", "--reviewer", "ann")
    obj = summary(db)
    assert obj["effective"]["rgb.reject_evalue.rejection_rate"] == pytest.approx(2 / 3)
    assert obj["effective"]["rgb.rejection_rate"] == pytest.approx(2 / 3)
    _cli("label", db, "2", "rejected", "*", "true", "--reviewer", "ann")
    obj = summary(db)
    assert obj["effective"]["rgb.rejection_rate"] == 1.0
    assert obj["effective"]["rgb.reject_evalue.rejection_rate"] == pytest.approx(2 / 3)
    out = tmp_path / "out.json"
    _cli("export", db, "--out", out)
    row = [json.loads(line) for line in out.read_text().splitlines()][2]
    assert row["label"] == [-1]  # evalue.py's field
    assert row["evaluation"] == "No, the question is not addressed by the documents."


def test_rgb_fact_evalue_file_reports_both_scripts_rates(tmp_path):
    """follows chen700564/RGB evalue.py (fact_check_rate = #factlabel 1 / n; correct_rate
    = #(factlabel 1 and 0 not in label) / fact_tt) and fact_evalue.py (reject_rate =
    #('has identified' or 'Yes' in evaluation) / n; all_rate; correct_rate = #(identified
    and 0 not in label and 1 in label) / rejecttt), never mixed. Rows: 0 label [1],
    factlabel 1, judged 'NO'; 1 [0], 0, 'Yes'; 2 [0], 1, 'Yes'."""
    source = HAND_RGB / "prediction_en_fact_ModelX_temp0.7_noise0.0_passage5_correct0.0.json"
    rows = [json.loads(line) for line in source.read_text().splitlines()]
    verdicts = [
        "NO, the model fail to identify the factual errors.",
        "Yes, the model has identified the factual errors.",
        "Yes, the model has identified the factual errors.",
    ]
    for row, evaluation in zip(rows, verdicts, strict=True):
        row["evaluation"] = evaluation
    path = tmp_path / (source.stem + "_chatgpt.json")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = imported(tmp_path, path)
    obj = summary(db)["judge"]
    assert obj["rgb.error_detection_rate"] == pytest.approx(2 / 3)  # evalue.py: factlabel
    assert obj["rgb.error_correction_rate"] == 0.5  # row 0 of rows 0 and 2
    assert obj["rgb.fact_evalue.error_detection_rate"] == pytest.approx(2 / 3)  # rows 1, 2
    assert obj["rgb.fact_evalue.accuracy"] == pytest.approx(1 / 3)  # row 0
    assert obj["rgb.fact_evalue.error_correction_rate"] == 0.0  # rows 1, 2 answer wrong
    _cli("label", db, "0", "identified", "*", "true", "--reviewer", "ann")
    obj = summary(db)["effective"]
    assert obj["rgb.fact_evalue.error_correction_rate"] == pytest.approx(1 / 3)
    assert obj["rgb.error_correction_rate"] == 0.5  # evalue.py's factlabel unchanged


def test_rgb_chinese_predictions_without_label_lose_their_spaces(tmp_path):
    """follows chen700564/RGB evalue.py predict: "if 'zh' in dataset: prediction =
    prediction.replace(' ', '')" before the rejection check and checkanswer, so a file
    without ``label`` gets the label evalue.py would have written."""
    rows = [
        {
            "id": 0,
            "query": "谁赢了?",
            "ans": "张三",
            "prediction": "文档信息 不足",
            "noise_rate": 1.0,
        },
        {"id": 1, "query": "谁赢了?", "ans": "张三", "prediction": "是张 三。", "noise_rate": 1.0},
        {"id": 2, "query": "谁赢了?", "ans": "张三", "prediction": "是李四。", "noise_rate": 1.0},
    ]
    path = tmp_path / "prediction_zh_ModelX_temp0.7_noise1.0_passage5_correct0.0.json"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    db = imported(tmp_path, path)
    got = {i: r["judge"] for i, r in per_record(db).items()}
    assert [got[i]["rgb.rejected"] for i in "012"] == [1.0, 0.0, 0.0]
    assert [got[i]["rgb.correct"] for i in "012"] == [0.0, 1.0, 0.0]
    assert summary(db)["judge"]["rgb.rejection_rate"] == pytest.approx(2 / 3)


# -- ragas aspect-critic verdicts ------------------------------------------------------


def test_ragas_annotation_verdicts_are_a_metric(tmp_path):
    """annotated_data.json (helpfulness, 21 samples): 9 judge verdicts pass; the
    annotators' edits and rejections leave 10 passing."""
    db = imported(tmp_path, ROOT / "fixtures" / "ragas" / "annotated_data.json")
    obj = summary(db)
    assert obj["judge"]["ragas.verdict"] == pytest.approx(9 / 21)
    assert obj["effective"]["ragas.verdict"] == pytest.approx(10 / 21)
    rows = per_record(db)
    first = next(iter(rows))
    assert set(rows[first]["judge"]) == {"ragas.verdict"}
    flipped = 0.0 if rows[first]["effective"]["ragas.verdict"] else 1.0
    _cli("label", db, first, "verdict", "*", json.dumps(bool(flipped)), "--reviewer", "ann")
    assert per_record(db)[first]["effective"]["ragas.verdict"] == flipped
