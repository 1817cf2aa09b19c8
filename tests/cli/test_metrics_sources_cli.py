"""Metrics through the real source importers (skipped until the adapters are present):
FActScore F1@K as SAFE reports it, MT-RAG's stored metrics reproduced, RGB per noise rate."""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from pathlib import Path

import pytest
from rouge_score import rouge_scorer

from ragreview import formats
from tests.conftest import in_process

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "fixtures"


def needs(fmt: str) -> None:
    if fmt not in formats.REGISTRY:
        pytest.skip(f"the {fmt} adapter is not in this build")


def run(*args: str, cwd: Path) -> str:
    """``ragreview ARGS`` in ``cwd`` with HOME there, in process (click's CliRunner):
    the numbers these tests compare are the same, without a child Python's start-up
    per call; an uncaught exception is raised."""
    result = in_process(args, cwd)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def one(text: str) -> dict:
    (obj,) = [json.loads(line) for line in text.splitlines() if line.strip()]
    return obj


@pytest.mark.parametrize(
    "name, f1_100, f1_64", [("ChatGPT", 0.3031, 0.4149), ("InstructGPT", 0.1831, 0.2563)]
)
def test_factscore_import_then_metrics(tmp_path, name, f1_100, f1_64):
    needs("factscore")
    src = SHARED / "factscore" / f"factscore_labeled_{name}.jsonl"
    if not src.exists():
        pytest.skip("FActScore fixtures absent")
    path = tmp_path / src.name
    path.write_bytes(src.read_bytes())
    run("import", str(path), cwd=tmp_path)
    obj = one(run("metrics", str(path), "--json", cwd=tmp_path))
    assert round(obj["judge"]["longform.f1_at_k"], 4) == f1_100
    assert round(obj["effective"]["longform.f1_at_k"], 4) == f1_100
    run("settings", str(path), "longform.k=64", cwd=tmp_path)
    obj = one(run("metrics", str(path), "--json", cwd=tmp_path))
    assert round(obj["judge"]["longform.f1_at_k"], 4) == f1_64
    assert round(obj["effective"]["longform.f1_at_k"], 4) == f1_64


# -- MT-RAG: evaluation output whose stored metrics follow run_algorithmic.py ---------

SCORER = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


def _normalize(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def _recall(prediction: str, target: str) -> float:
    p, t = _normalize(prediction).split(), _normalize(target).split()
    common = sum((Counter(p) & Counter(t)).values())
    return 0 if common == 0 else common / len(t)


def _extractive(prediction: str, passage: str) -> float:
    def clean(s: str) -> str:
        return re.sub(r"[^\w\s]", "", s.replace("\n", " ")).lower()

    text, target = clean(prediction), clean(passage)
    if target.replace(" ", "") in text.replace(" ", ""):
        return 1
    return SCORER.score(target, text)["rougeL"].fmeasure


def _evaluated(row: dict, bert_r: float, bert_k: list[float], idk: float) -> dict:
    """The row as MT-RAG's generation eval would write it (BERTScores given)."""
    pred = row["predictions"][0]["text"]
    targets = [t["text"] for t in row["targets"]]
    passages = [c["text"] for c in row["contexts"]]
    m: dict = {
        "Recall": [_recall(pred, t) for t in targets],
        "RougeL_stemFalse": [SCORER.score(t, pred)["rougeL"].fmeasure for t in targets],
        "BertscoreR": [bert_r],
        "Length": [len(pred) for _ in targets],
        "idk_eval": [idk],
        "RB_llm": [0.7],
    }
    if passages:
        m["BertKPrec"] = bert_k[: len(passages)] + [0.0] * (len(passages) - len(bert_k))
        m["Extractiveness_RougeL"] = [_extractive(pred, p) for p in passages]
    recall = (bert_r + 1) / 2
    rouge = m["RougeL_stemFalse"][0]
    extr = (max(v or 0 for v in m["BertKPrec"]) + 1) / 2 if "BertKPrec" in m else 0
    if recall == 0 or rouge == 0 or extr == 0:
        agg = 0
    else:
        agg = 3 * recall * rouge * extr / (recall * rouge + recall * extr + rouge * extr)
    m["RB_agg"] = [agg]
    a = row["answerability"][0]
    for metric, raw in (("RB_agg", agg), ("RB_llm", 0.7)):
        if a in ("UNANSWERABLE", "CONVERSATIONAL"):
            value = 1 if idk == 1 else 0
        elif idk == 1:
            value = 0
        else:
            value = raw
        m[f"{metric}_idk"] = [value]
    return {**row, "metrics": m}


def test_mtrag_stored_metrics_reproduced(tmp_path):
    needs("mtrag")
    src = SHARED / "mtrag" / "responses-10.jsonl"
    if not src.exists():
        pytest.skip("MT-RAG fixtures absent")
    rows = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    verdicts = [1, 0, 0.5, 1, 0, 0, 0.5, 0, 1, 0]
    path = tmp_path / "evaluated.jsonl"
    with path.open("w") as out:
        for i, (row, idk) in enumerate(zip(rows, verdicts)):
            row = _evaluated(row, bert_r=0.1 * i - 0.2, bert_k=[0.05 * i, 0.3], idk=idk)
            out.write(json.dumps(row) + "\n")
    run("import", str(path), cwd=tmp_path)
    out = run("metrics", str(path), cwd=tmp_path)
    report = out.split("stored scores in the source")[1]
    compared = {}
    for line in report.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) == 5 and cells[0].startswith("mtrag."):
            compared[cells[0]] = cells
    expected = {
        "mtrag.recall": 10,
        "mtrag.rouge_l": 10,
        "mtrag.length": 10,
        "mtrag.extractiveness": 9,  # the first task has no passages
        "mtrag.rb_agg": 10,
        "mtrag.rb_llm": 10,
        "mtrag.rb_agg_idk": 10,
        "mtrag.rb_llm_idk": 10,
    }
    for name, n in expected.items():
        assert compared[name][1:3] == [str(n), "0"], compared[name]
    per = [
        json.loads(x)
        for x in run("metrics", str(path), "--per-record", "--json", cwd=tmp_path).splitlines()
    ]
    assert per[0]["judge"]["mtrag.rb_agg_idk"] == 1.0  # UNANSWERABLE, said IDK
    assert any(r["judge"]["mtrag.rb_agg"] > 0 for r in per)


def test_rgb_per_noise_rate(tmp_path):
    needs("rgb")
    hand = ROOT / "fixtures" / "handwritten" / "rgb"
    files = sorted(hand.glob("prediction_en_ModelX_*noise1.0*correct0.0.json"))
    if not files:
        pytest.skip("hand-written RGB predictions absent")
    src = files[0]
    path = tmp_path / src.name
    path.write_bytes(src.read_bytes())
    run("import", str(path), cwd=tmp_path)
    (obj,) = [
        json.loads(x)
        for x in run(
            "metrics", str(path), "--by", "noise_rate", "--json", cwd=tmp_path
        ).splitlines()
    ]
    assert obj["group"] == {"noise_rate": 1.0}
    rows = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    # RGB's all_rate at noise rate 1: rejected ([-1]) or fully correct
    expected = sum(r["label"][0] == -1 or (0 not in r["label"] and 1 in r["label"]) for r in rows)
    assert obj["judge"]["rgb.rejection_rate"] == pytest.approx(expected / len(rows))
