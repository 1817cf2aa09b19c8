"""What ``export --as source`` writes for values: the reference's types for recomputed
ones, the stored text for the ones a review does not change, and the refusal.

MT-RAG's conditioned metrics follow ``get_idk_underspec_score`` (``get_idk_score`` for
the older ``*_idk`` fields) in IBM/mt-rag-benchmark scripts/evaluation: a constant
branch returns the int 0 or 1, the pass-through branch the raw metric as the row holds
it. The rows below are written like pandas' ``to_json`` (compact, 10 digits).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from .helpers import FIXTURES, HANDWRITTEN, run

RB_AGG = 0.5957009536  # 10 digits, as pandas wrote it; recomputed: 0.5957009536016744


def mtrag_line(answerability: str, idk: Any, conditioned: Any, old_fields: bool = False) -> str:
    suffix = "_idk" if old_fields else "_idk_underspecified"
    metrics = {
        "Recall": [0.5],
        "RougeL_stemFalse": [0.3333333333],
        "BertscoreP": [0.3012345678],
        "BertscoreR": [0.4123456789],
        "BertKPrec": [0.2345678901, 0.1],
        "Length": [55],
        "RB_agg": [RB_AGG],
        "underspecified_eval": [0],
        "idk_eval": [idk],
        "RL_F": [0.6666666667],
        "RB_llm": [0.8],
        f"RL_F{suffix}": [conditioned if conditioned is not None else 0.6666666667],
        f"RB_llm{suffix}": [conditioned if conditioned is not None else 0.8],
        f"RB_agg{suffix}": [conditioned if conditioned is not None else RB_AGG],
    }
    row = {
        "task_id": "c1::2",
        "contexts": [
            {"document_id": "d1", "text": "The Eiffel Tower is on the Champ de Mars in Paris."},
            {"document_id": "d2", "text": "Paris is the capital of France."},
        ],
        "input": [{"speaker": "user", "text": "Where is the Eiffel Tower?"}],
        "targets": [{"speaker": "agent", "text": "It is on the Champ de Mars in Paris."}],
        "answerability": [answerability],
        "predictions": [{"text": "The Eiffel Tower stands in Paris, on the Champ de Mars."}],
        "metrics": metrics,
    }
    return json.dumps(row, separators=(",", ":"))


def export_line(tmp_path: Path, line: str, labels: list[tuple[str, str]]) -> str:
    """Import one MT-RAG line, override ``labels`` (name, value), export as source."""
    tmp_path.mkdir(exist_ok=True)
    source = tmp_path / "eval.jsonl"
    source.write_text(line + "\n", encoding="utf-8")
    db = tmp_path / "eval.db"
    assert run("import", source, "--db", db, "--strict").exit_code == 0
    for name, value in labels:
        result = run("label", db, "c1::2", name, "*", value, "--reviewer", "ann")
        assert result.exit_code == 0, result.output
    out = tmp_path / "out.jsonl"
    result = run("export", db, "--out", out)
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8").rstrip("\n")


def test_conditioned_constants_are_ints_as_mtrag_writes_them(tmp_path: Path) -> None:
    line = mtrag_line("UNANSWERABLE", 0, 0)
    out = export_line(tmp_path, line, [("idk", "1")])
    # get_idk_underspec_score returns the int 1: ``[1]``, not ``[1.0]``
    for name in ("RL_F", "RB_llm", "RB_agg"):
        assert f'"{name}_idk_underspecified":[1]' in out
    assert out == line.replace('"idk_eval":[0]', '"idk_eval":[1]').replace(
        '_idk_underspecified":[0]', '_idk_underspecified":[1]'
    )


def test_idk_on_an_answerable_task_writes_int_zero(tmp_path: Path) -> None:
    line = mtrag_line("ANSWERABLE", 0, None)
    out = export_line(tmp_path, line, [("idk", "1")])
    metrics = json.loads(out)["metrics"]
    for name in ("RL_F", "RB_llm", "RB_agg"):
        value = metrics[f"{name}_idk_underspecified"]
        assert value == [0] and type(value[0]) is int


def test_a_rating_override_leaves_the_other_floats_as_stored(tmp_path: Path) -> None:
    line = mtrag_line("ANSWERABLE", 0, None)
    out = export_line(tmp_path, line, [("rb_llm_rating", "7")])
    # only RB_llm and its conditioned copy change; RB_agg_idk keeps 0.5957009536 (our
    # recomputation, 0.5957009536016744, differs in the last digits)
    assert out == line.replace('"RB_llm":[0.8]', '"RB_llm":[0.7]').replace(
        '"RB_llm_idk_underspecified":[0.8]', '"RB_llm_idk_underspecified":[0.7]'
    )


def test_back_to_answerable_passes_the_stored_metric_text_through(tmp_path: Path) -> None:
    line = mtrag_line("UNANSWERABLE", 0, 0)
    out = export_line(tmp_path, line, [("answerability", "ANSWERABLE")])
    metrics = json.loads(out)["metrics"]
    assert f'"RB_agg_idk_underspecified":[{RB_AGG}]' in out
    assert metrics["RB_llm_idk_underspecified"] == [0.8]
    assert metrics["RL_F_idk_underspecified"] == [0.6666666667]
    assert json.loads(out)["answerability"] == ["ANSWERABLE"]


def test_older_fields_know_no_underspecified_branch(tmp_path: Path) -> None:
    # get_idk_score (before UNDERSPECIFIED existed) passes the metric through
    line = mtrag_line("ANSWERABLE", 0, None, old_fields=True)
    out = export_line(tmp_path, line, [("answerability", "UNDERSPECIFIED")])
    assert out == line.replace(
        '"answerability":["ANSWERABLE"]', '"answerability":["UNDERSPECIFIED"]'
    )
    # the HEAD fields do: underspecified_eval 0 -> 0
    head = mtrag_line("ANSWERABLE", 0, None)
    metrics = json.loads(
        export_line(tmp_path / "head", head, [("answerability", "UNDERSPECIFIED")])
    )
    assert metrics["metrics"]["RB_agg_idk_underspecified"] == [0]


def test_task_rows_without_metrics_get_the_verdicts_in_mtrags_names(tmp_path: Path) -> None:
    source = tmp_path / "responses.jsonl"
    shutil.copy(FIXTURES / "mtrag" / "responses-10.jsonl", source)
    db = tmp_path / "r.db"
    assert run("import", source, "--db", db).exit_code == 0
    rid = "dd6b6ffd177f2b311abe676261279d2f::1"
    for name, value in (
        ("idk", "1"),
        ("answerability", "PARTIAL"),
        ("underspecified", "0.5"),
        ("rb_llm_rating", "7"),
    ):
        assert run("label", db, rid, name, "*", value).exit_code == 0
    out = tmp_path / "out.jsonl"
    assert run("export", db, "--out", out).exit_code == 0
    row = json.loads(out.read_text().splitlines()[0])
    assert row["answerability"] == ["PARTIAL"]
    assert row["metrics"] == {"idk_eval": [1], "underspecified_eval": [0.5], "RB_llm": [0.7]}


@pytest.fixture
def rgb_db(tmp_path: Path) -> Path:
    source = tmp_path / "prediction_en_ModelX_temp0.7_noise1.0_passage5_correct0.0.json"
    shutil.copy(HANDWRITTEN / "rgb" / source.name, source)
    db = tmp_path / "rgb.db"
    assert run("import", source, "--db", db).exit_code == 0
    # a rejection holds no answer-part bits: RGB's label is then [-1]
    assert run("label", db, "2", "rejected", "*", "true").exit_code == 0
    assert run("label", db, "2", "part_matched", "p0", "true").exit_code == 0
    return db


def test_a_label_the_format_cannot_hold_stops_the_export(rgb_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = run("export", rgb_db, "--out", out)
    assert result.exit_code == 1
    assert result.output.count("\n") == 1  # one message
    assert "the rgb format cannot hold these reviewed labels: part_matched (1 record: '2')" in (
        result.output
    )
    assert "--as ragreview" in result.output and "--allow-loss" in result.output
    assert not out.exists()
    result = run("export", rgb_db, "--out", "-")  # stdout: nothing either
    assert result.exit_code == 1 and "{" not in result.output


def test_allow_loss_writes_what_the_format_holds_and_says_what_it_left_out(
    rgb_db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out.json"
    result = run("export", rgb_db, "--out", out, "--allow-loss")
    assert result.exit_code == 0, result.output
    assert "left out (--allow-loss): part_matched (1 record: '2')" in result.output
    assert json.loads(out.read_text().splitlines()[2])["label"] == [-1]
    # ragreview's own format holds everything: no refusal
    result = run("export", rgb_db, "--out", tmp_path / "all.jsonl", "--as", "ragreview")
    assert result.exit_code == 0, result.output


def test_mtragun_task_record_gets_its_verdicts(tmp_path: Path) -> None:
    # MTRAG-UN task records: "<conv><::><turn>" ids, the turn as a string, no metrics
    row = {
        "conversation_id": "a1b2",
        "task_id": "a1b2<::>3",
        "turn": "3",
        "Collection": "fiqa",
        "input": [{"speaker": "user", "text": "Which one should I pick?"}],
        "contexts": [{"document_id": "f-1", "text": "Index funds have low fees."}],
        "targets": [{"speaker": "agent", "text": "Which options are you comparing?"}],
        "answerability": ["UNDERSPECIFIED"],
        "predictions": [{"text": "Pick the index fund."}],
    }
    source = tmp_path / "mtragun.jsonl"
    source.write_text(json.dumps(row) + "\n", encoding="utf-8")
    db = tmp_path / "un.db"
    assert run("import", source, "--db", db, "--strict").exit_code == 0
    before = json.loads(run("metrics", db, "--per-record", "--json").output.splitlines()[0])
    assert run("label", db, "a1b2<::>3", "idk", "*", "1").exit_code == 0
    assert run("label", db, "a1b2<::>3", "underspecified", "*", "1").exit_code == 0
    after = json.loads(run("metrics", db, "--per-record", "--json").output.splitlines()[0])
    assert after["effective"] != before["effective"]  # the review moved the metrics
    out = tmp_path / "out.jsonl"
    assert run("export", db, "--out", out).exit_code == 0
    written = json.loads(out.read_text())
    assert written["metrics"] == {"idk_eval": [1], "underspecified_eval": [1]}
    assert {k: v for k, v in written.items() if k != "metrics"} == row


RAGAS_V1 = HANDWRITTEN / "ragas" / "ragas_v1_results.jsonl"


def test_ragas_verdicts_on_bare_statements_and_contexts_without_verdicts(tmp_path: Path) -> None:
    source = tmp_path / RAGAS_V1.name
    shutil.copy(RAGAS_V1, source)
    db = tmp_path / "v1.db"
    assert run("import", source, "--db", db, "--strict").exit_code == 0
    assert run("label", db, "2", "statement", "s1", "false").exit_code == 0
    assert run("label", db, "2", "context_useful", "c1", "true").exit_code == 0
    out = tmp_path / "out.jsonl"
    result = run("export", db, "--out", out)
    assert result.exit_code == 0, result.output
    before = [json.loads(line) for line in RAGAS_V1.read_text().splitlines()]
    after = [json.loads(line) for line in out.read_text().splitlines()]
    assert after[0] == before[0]
    assert after[1]["statements"] == [
        {"statement": "Gustave Eiffel designed it alone.", "verdict": 0},
        "Gustave Eiffel was French.",
    ]
    assert after[1]["context_precision_verdicts"] == [
        {"reason": "", "verdict": None},
        {"reason": "", "verdict": 1},
    ]
    # a row has no field for a pass/fail verdict: the export refuses
    assert run("label", db, "1", "verdict", "*", "true").exit_code == 0
    result = run("export", db, "--out", tmp_path / "again.jsonl")
    assert result.exit_code == 1
    assert "cannot hold these reviewed labels: verdict (1 record: '1')" in result.output
