"""Overrides change exactly the label and score fields of the source when exported,
and the export read back gives the same effective labels."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ragreview.core.labels import effective
from ragreview.store import open_database
from ragreview.store import records as store_records

from .helpers import FIXTURES, HANDWRITTEN, load_values, meaningful, run

RGB = HANDWRITTEN / "rgb"


def review(tmp_path: Path, source: Path, labels: list[tuple[str, str, str, str]]) -> Path:
    """Import ``source``, apply ``labels`` (id, name, target, value) through the CLI,
    export as source; return the exported file."""
    path = tmp_path / source.name
    shutil.copy(source, path)
    db = tmp_path / "review.db"
    assert run("import", path, "--db", db, "--strict").exit_code == 0
    for rid, name, target, value in labels:
        result = run("label", db, rid, name, target, value, "--reviewer", "ann")
        assert result.exit_code == 0, result.output
    out = tmp_path / ("export" + source.suffix)
    result = run("export", db, "--out", out)
    assert result.exit_code == 0, result.output
    return out


def effective_by_id(db_path: Path) -> dict[str, Any]:
    db = open_database(db_path)
    out = {}
    for item in store_records.iterate(db):
        layer = meaningful(effective(item.judge, item.human))
        if layer.get("rejected", {}).get("*"):
            layer.pop("part_matched", None)  # RGB's [-1] label holds no part bits
        out[item.id] = layer
    return out


def assert_same_effective(tmp_path: Path, exported: Path) -> None:
    again = tmp_path / "again.db"
    copy = tmp_path / ("reimport" + exported.suffix)
    shutil.copy(exported, copy)
    assert run("import", copy, "--db", again, "--strict").exit_code == 0
    assert effective_by_id(again) == effective_by_id(tmp_path / "review.db")


def changed_fields(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    assert list(before) == list(after)  # same keys, same order
    return {k for k in before if json.dumps(before[k]) != json.dumps(after[k])}


def rows(path: Path) -> list[Any]:
    return load_values(path)


def test_ragbench_override_changes_labels_and_scores_only(tmp_path: Path) -> None:
    source = HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl"
    out = review(
        tmp_path,
        source,
        [
            ("covidqa-17", "relevant", "0c", "true"),
            ("covidqa-17", "utilized", "1a", "false"),
            ("covidqa-17", "supported", "b", "false"),
        ],
    )
    before, after = rows(source), rows(out)
    assert before[1:] == after[1:]
    assert out.read_text().splitlines()[1:] == source.read_text().splitlines()[1:]
    old, new = before[0], after[0]
    assert changed_fields(old, new) == {
        "all_relevant_sentence_keys",
        "all_utilized_sentence_keys",
        "unsupported_response_sentence_keys",
        "sentence_support_information",
        "adherence_score",
        "relevance_score",
        "utilization_score",
        "completeness_score",
    }
    assert new["all_relevant_sentence_keys"] == ["0a.", "0b.", "1a.", "0c"]  # dots kept
    assert new["all_utilized_sentence_keys"] == ["0a", "0b"]
    assert new["unsupported_response_sentence_keys"] == ["b"]
    assert new["sentence_support_information"][0] == old["sentence_support_information"][0]
    assert new["sentence_support_information"][1]["fully_supported"] is False
    assert new["adherence_score"] is False
    # count-based TRACe (variant ragbench): 4 relevant and 2 utilized of 5 sentences
    assert new["relevance_score"] == pytest.approx(4 / 5)
    assert new["utilization_score"] == pytest.approx(2 / 5)
    assert new["completeness_score"] == pytest.approx(2 / 4)
    assert_same_effective(tmp_path, out)


def test_ragbench_support_keys_override(tmp_path: Path) -> None:
    source = HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl"
    out = review(tmp_path, source, [("covidqa-18", "support_keys", "b", '["0b", "general"]')])
    old, new = rows(source)[1], rows(out)[1]
    assert changed_fields(old, new) == {"sentence_support_information"} | {
        k
        for k in ("relevance_score", "utilization_score", "completeness_score")
        if json.dumps(old[k]) != json.dumps(new[k])
    }
    assert new["sentence_support_information"][1]["supporting_sentence_keys"] == ["0b", "general"]
    assert_same_effective(tmp_path, out)


def test_rgb_noise_override(tmp_path: Path) -> None:
    source = RGB / "prediction_en_ModelX_temp0.7_noise0.4_passage5_correct0.0.json"
    out = review(tmp_path, source, [("1", "part_matched", "p0", "true")])
    before, after = rows(source), rows(out)
    assert changed_fields(before[1], after[1]) == {"label"}
    assert after[1]["label"] == [1]
    assert before[0] == after[0] and before[2] == after[2]
    assert_same_effective(tmp_path, out)


def test_rgb_negative_rejection_override(tmp_path: Path) -> None:
    source = RGB / "prediction_en_ModelX_temp0.7_noise1.0_passage5_correct0.0.json"
    out = review(
        tmp_path, source, [("2", "rejected", "*", "true"), ("0", "rejected", "*", "false")]
    )
    before, after = rows(source), rows(out)
    assert changed_fields(before[2], after[2]) == {"label"}
    assert after[2]["label"] == [-1]
    assert after[0]["label"] == [0]  # not a rejection: its one part is not matched
    assert_same_effective(tmp_path, out)


def test_rgb_judge_script_evaluation_override(tmp_path: Path) -> None:
    source = RGB / "prediction_en_ModelX_temp0.7_noise1.0_passage5_correct0.0_chatgpt.json"
    out = review(tmp_path, source, [("2", "not_addressed", "*", "true")])
    before, after = rows(source), rows(out)
    assert changed_fields(before[2], after[2]) == {"evaluation"}
    assert "not addressed" in after[2]["evaluation"]
    assert_same_effective(tmp_path, out)


def test_rgb_judge_script_file_keeps_evalue_label_apart(tmp_path: Path) -> None:
    """evalue.py's own verdict goes to its own field, the script's text untouched."""
    source = RGB / "prediction_en_ModelX_temp0.7_noise1.0_passage5_correct0.0_chatgpt.json"
    out = review(tmp_path, source, [("2", "rejected", "*", "true")])
    before, after = rows(source), rows(out)
    assert changed_fields(before[2], after[2]) == {"label"} and after[2]["label"] == [-1]
    assert_same_effective(tmp_path, out)


def test_rgb_integration_override(tmp_path: Path) -> None:
    source = RGB / "prediction_zh_int_ModelX_temp0.7_noise0.2_passage5_correct0.0.json"
    out = review(tmp_path, source, [("1", "part_matched", "p1", "true")])
    before, after = rows(source), rows(out)
    assert changed_fields(before[1], after[1]) == {"label"}
    assert after[1]["label"] == [1, 1]
    assert "宣誓仪式" in out.read_text(encoding="utf-8")  # Chinese written as text
    assert_same_effective(tmp_path, out)


def test_rgb_counterfactual_override(tmp_path: Path) -> None:
    source = RGB / "prediction_en_fact_ModelX_temp0.7_noise0.0_passage5_correct0.0.json"
    out = review(tmp_path, source, [("1", "error_detected", "*", "true")])
    before, after = rows(source), rows(out)
    assert changed_fields(before[1], after[1]) == {"factlabel"}
    assert after[1]["factlabel"] == 1
    assert_same_effective(tmp_path, out)


def test_safe_override_recomputes_counts_f1_and_aggregates(tmp_path: Path) -> None:
    source = HANDWRITTEN / "safe" / "2024-04-01-12-00-00-SAFE.json"
    out = review(tmp_path, source, [("0", "fact", "f6", "S"), ("1", "fact", "f3", "S")])
    (before,), (after,) = rows(source), rows(out)
    assert list(before) == list(after)
    top = {k for k in before if json.dumps(before[k]) != json.dumps(after[k])}
    assert top == {
        "per_prompt_data",
        "side2_avg_Supported",
        "side2_std_Supported",
        "side2_avg_Not Supported",
        "side2_std_Not Supported",
        "side2_avg_f1_-1",
        "side2_std_f1_-1",
    }
    ev0 = after["per_prompt_data"][0]["side2_posthoc_eval_data"]
    old0 = before["per_prompt_data"][0]["side2_posthoc_eval_data"]
    assert changed_fields(old0, ev0) == {
        "checked_statements",
        "Supported",
        "Not Supported",
        "f1_-1",
    }
    assert ev0["checked_statements"][5]["annotation"] == "Supported"
    assert ev0["checked_statements"][5]["rate_data"] == old0["checked_statements"][5]["rate_data"]
    assert (ev0["Supported"], ev0["Not Supported"], ev0["Irrelevant"]) == (5, 0, 1)
    # F1@100 with S=5, NS=0: P = 1, R = 0.05
    assert ev0["f1_-1"] == pytest.approx(2 * 1 * 0.05 / 1.05)
    ev1 = after["per_prompt_data"][1]["side2_posthoc_eval_data"]
    assert (ev1["Supported"], ev1["Not Supported"]) == (3, 0)
    assert ev1["f1_-1"] == pytest.approx(2 * 1 * 0.03 / 1.03)
    assert after["side2_avg_Supported"] == pytest.approx((5 + 3 + 0) / 3)
    assert after["side2_avg_Not Supported"] == 0
    mean_f1 = (ev0["f1_-1"] + ev1["f1_-1"] + 0) / 3
    assert after["side2_avg_f1_-1"] == pytest.approx(mean_f1)
    var = sum((x - mean_f1) ** 2 for x in (ev0["f1_-1"], ev1["f1_-1"], 0)) / 3
    assert after["side2_std_f1_-1"] == pytest.approx(var**0.5)
    assert after["per_prompt_data"][2] == before["per_prompt_data"][2]
    assert_same_effective(tmp_path, out)


def test_factscore_override_changes_fact_label_only(tmp_path: Path) -> None:
    source = FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl"
    out = review(tmp_path, source, [("Lanny Flaherty", "fact", "f3", "S")])
    before, after = rows(source), rows(out)
    assert before[1:] == after[1:]
    assert changed_fields(before[0], after[0]) == {"annotations"}
    fact = after[0]["annotations"][0]["human-atomic-facts"][2]
    assert fact == {"text": "Lanny Flaherty was born on December 18, 1949.", "label": "S"}
    assert_same_effective(tmp_path, out)


def test_mtrag_answerability_override(tmp_path: Path) -> None:
    source = FIXTURES / "mtrag" / "responses-10.jsonl"
    rid = "dd6b6ffd177f2b311abe676261279d2f::1"
    out = review(tmp_path, source, [(rid, "answerability", "*", "PARTIAL")])
    lines_in = source.read_text().splitlines()
    lines_out = out.read_text().splitlines()
    assert lines_in[1:] == lines_out[1:]
    assert "NaN" in lines_out[0]  # pandas' NaN literals survive a rewrite
    before, after = rows(source)[0], rows(out)[0]
    assert changed_fields(before, after) == {"answerability"}
    assert after["answerability"] == ["PARTIAL"]
    assert_same_effective(tmp_path, out)


def test_ragas_annotation_override_feeds_alignment(tmp_path: Path) -> None:
    source = FIXTURES / "ragas" / "annotated_data.json"
    (doc,) = rows(source)
    sample = doc["helpfulness"][0]
    assert sample["is_accepted"] is True and sample["metric_output"] == 1
    out = review(tmp_path, source, [("1", "verdict", "*", "false")])
    (after,) = rows(out)
    new = after["helpfulness"][0]
    assert changed_fields(sample, new) == {"prompts", "is_accepted"}
    assert new["is_accepted"] is False
    prompt = new["prompts"]["single_turn_aspect_critic_prompt"]
    assert prompt["edited_output"]["verdict"] == 0
    assert (
        prompt["prompt_output"]
        == sample["prompts"]["single_turn_aspect_critic_prompt"]["prompt_output"]
    )
    assert after["helpfulness"][1:] == doc["helpfulness"][1:]
    assert_same_effective(tmp_path, out)


def test_ragas_annotation_human_labels_are_imported(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    assert run("import", FIXTURES / "ragas" / "edited_chain_runs.json", "--db", db).exit_code == 0
    database = open_database(db)
    stored = list(store_records.iterate(database))
    # every sample is accepted (is_accepted true): each is a reviewed record whose human
    # verdict is the judge's, except two that carry an edited verdict that differs
    assert len(stored) == 18 and all(i.status == "reviewed" and i.human for i in stored)
    differ = [i for i in stored if i.human["verdict"]["*"] != i.judge["verdict"]["*"]]
    assert len(differ) == 2
