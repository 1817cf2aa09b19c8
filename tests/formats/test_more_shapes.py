"""Shapes the real fixtures do not cover: MT-RAG evaluation output, ragas JSON arrays,
SAFE files with both sides evaluated, RGB files without labels."""

from __future__ import annotations

import json
import math
from pathlib import Path

from ragreview import formats
from ragreview.core.import_items import ImportItem

from .helpers import FIXTURES, canonical, load_values, run


def items_of(path: Path, fmt: str | None = None) -> list[ImportItem]:
    _fmt, stream = formats.read(path, fmt)
    out = list(stream)
    assert all(isinstance(i, ImportItem) for i in out), out
    return out  # type: ignore[return-value]


def mtrag_eval_line() -> dict:
    """``run_generation_eval.py`` output: the task plus ``metrics``, a dict of lists."""
    row = json.loads((FIXTURES / "mtrag" / "responses-10.jsonl").read_text().splitlines()[1])
    row["answerability"] = ["UNDERSPECIFIED"]
    row["metrics"] = {
        "Recall": [0.5],
        "RougeL_stemFalse": [0.4],
        "BertscoreP": [0.2],
        "BertscoreR": [0.3],
        "BertKPrec": [0.1, None, 0.6],
        "Extractiveness_RougeL": [0.2, 0.3, 0.1],
        "Length": [120],
        "RB_agg": [0.45],
        "underspecified_eval": [1],
        "idk_eval": [0.5],
        "RL_F": [float("nan")],
        "RB_llm": [0.7],
        "RL_F_idk_underspecified": [1],
        "RB_llm_idk_underspecified": [1],
        "RB_agg_idk_underspecified": [1],
    }
    return row


def test_mtrag_evaluation_output(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    path.write_text(json.dumps(mtrag_eval_line()) + "\n")  # json writes NaN as pandas does
    (item,) = items_of(path)
    assert item.record.answerability == "UNDERSPECIFIED"
    assert item.judge == {
        "answerability": {"*": "UNDERSPECIFIED"},
        "idk": {"*": 0.5},
        "underspecified": {"*": 1},
        "rb_llm_rating": {"*": 7.0},
    }
    scores = item.record.scores
    assert scores["mtrag.bertscore_r"] == 0.3 and scores["mtrag.bertscore_p"] == 0.2
    assert scores["mtrag.bert_k_prec"] == 0.6  # max over passages, a missing one as 0
    assert scores["mtrag.rl_f"] is None  # NaN: undefined
    assert scores["stored.RB_agg"] == 0.45 and scores["stored.Extractiveness_RougeL"] == 0.3
    assert len(item.record.documents) == len(mtrag_eval_line()["contexts"])
    assert item.record.conversation[-1].speaker == "user"
    assert item.record.question == item.record.conversation[-1].text

    db = tmp_path / "r.db"
    assert run("import", path, "--db", db, "--strict").exit_code == 0
    assert run("label", db, item.record.id, "underspecified", "*", "0").exit_code == 0
    out = tmp_path / "out.jsonl"
    assert run("export", db, "--out", out).exit_code == 0
    before, after = mtrag_eval_line(), json.loads(out.read_text())
    assert {k for k in before if canonical(before[k]) != canonical(after[k])} == {"metrics"}
    changed = {
        k
        for k in before["metrics"]
        if canonical(before["metrics"][k]) != canonical(after["metrics"][k])
    }
    assert "underspecified_eval" in changed
    assert changed <= {
        "underspecified_eval",
        "RL_F_idk_underspecified",
        "RB_llm_idk_underspecified",
        "RB_agg_idk_underspecified",
    }
    assert after["metrics"]["underspecified_eval"] == [0]
    # UNDERSPECIFIED and no longer judged underspecified: every conditioned metric is 0
    for name in (
        "RL_F_idk_underspecified",
        "RB_llm_idk_underspecified",
        "RB_agg_idk_underspecified",
    ):
        assert after["metrics"][name] == [0], name
    assert math.isnan(after["metrics"]["RL_F"][0])


def test_ragas_json_array_round_trip(tmp_path: Path) -> None:
    rows = [
        {
            "question": "Q1?",
            "answer": "A one.",
            "contexts": ["C one. C two."],
            "ground_truth": "A.",
        },
        {
            "question": "Q2?",
            "answer": "A two.",
            "contexts": [],
            "ground_truths": ["B.", "C."],
            "faithfulness": None,
        },
    ]
    path = tmp_path / "result.json"
    path.write_text(json.dumps(rows, indent=2))
    items = items_of(path)
    assert [i.record.id for i in items] == ["1", "2"]
    assert items[1].record.references == ("B.", "C.")
    db = tmp_path / "r.db"
    assert run("import", path, "--db", db, "--strict").exit_code == 0
    out = tmp_path / "out.json"
    assert run("export", db, "--out", out).exit_code == 0
    assert load_values(out) == [rows]


def test_safe_both_sides(tmp_path: Path) -> None:
    source = FIXTURES / "handwritten" / "safe" / "2024-04-01-12-00-00-SAFE.json"
    doc = json.loads(source.read_text())
    first = doc["per_prompt_data"][0]
    first["side1_posthoc_eval_data"] = json.loads(json.dumps(first["side2_posthoc_eval_data"]))
    path = tmp_path / "both-SAFE.json"
    path.write_text(json.dumps(doc))
    ids = [i.record.id for i in items_of(path)]
    assert ids == ["0/side1", "0/side2", "1/side2", "2/side2"]
    db = tmp_path / "r.db"
    assert run("import", path, "--db", db, "--strict").exit_code == 0
    assert run("label", db, "0/side1", "fact", "f1", "NS").exit_code == 0
    out = tmp_path / "out.json"
    assert run("export", db, "--out", out).exit_code == 0
    (after,) = load_values(out)
    p0 = after["per_prompt_data"][0]
    assert p0["side1_posthoc_eval_data"]["checked_statements"][0]["annotation"] == "Not Supported"
    assert p0["side2_posthoc_eval_data"] == first["side2_posthoc_eval_data"]


def test_rgb_prediction_without_labels_uses_rgb_rules(tmp_path: Path) -> None:
    row = {
        "id": 5,
        "query": "Who won?",
        "ans": [["Annie Ernaux", "Ernaux"], "2022"],
        "prediction": "Ernaux won in 2022. The documents contain factual errors.",
        "docs": ["Annie Ernaux won the 2022 prize."],
        "noise_rate": 0.0,
    }
    path = tmp_path / "prediction_en_fact_M_temp0.7_noise0.0_passage5_correct0.0.json"
    path.write_text(json.dumps(row) + "\n")
    (item,) = items_of(path)
    assert item.record.task == "rgb-counterfactual"
    assert item.judge == {
        "rejected": {"*": False},
        "part_matched": {"p0": True, "p1": True},
        "error_detected": {"*": True},
    }
    assert item.record.answer_parts == (("Annie Ernaux", "Ernaux"), ("2022",))


def test_rgb_data_file_has_no_judge_labels(tmp_path: Path) -> None:
    row = {
        "id": 0,
        "query": "Q",
        "answer": ["1月3日", "1月12日"],
        "asnwer1": ["1月3日"],
        "answer2": ["1月12日"],
        "positive": [["一。二！"], ["三？"]],
        "negative": ["四"],
    }
    path = tmp_path / "zh_int.json"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    (item,) = items_of(path)
    assert item.record.task == "rgb-integration"
    assert item.judge == {}
    assert [d.title for d in item.record.documents] == ["positive", "positive", "negative"]
    assert item.record.documents[0].sentences == (("0a", "一。"), ("0b", "二！"))
