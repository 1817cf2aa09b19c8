"""RAGChecker output files: detection, reading, ``export --as source`` and a re-import,
on RAGChecker's own checked example (fixtures/ragchecker), through the real CLI and DB."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ragreview import formats
from ragreview.core.labels import effective
from ragreview.core.metrics import ragchecker as rc
from ragreview.store import open_database
from ragreview.store import records as store_records

from .helpers import FIXTURES, run

OUTPUTS = FIXTURES / "ragchecker" / "checking_outputs.json"
INPUTS = FIXTURES / "ragchecker" / "checking_inputs.json"
AGGREGATES = {  # fixtures/README.md
    "overall.precision": 76.4,
    "overall.recall": 62.5,
    "overall.f1": 68.3,
    "retriever.claim_recall": 61.4,
    "retriever.context_precision": 87.5,
    "generator.context_utilization": 87.5,
    "generator.noise_sensitivity_in_relevant": 19.1,
    "generator.noise_sensitivity_in_irrelevant": 0.0,
    "generator.hallucination": 4.5,
    "generator.self_knowledge": 27.3,
    "generator.faithfulness": 68.2,
}
# one override of each label kind (tests/core/test_metrics_ragchecker.py works them out)
OVERRIDES = (
    ("0", "answer2response", "s11", "Entailment"),
    ("0", "response2answer", "r8", "Entailment"),
    ("1", "retrieved2response", "s1/c0", "Contradiction"),
    ("1", "retrieved2answer", "r5/c0", "Entailment"),
)


def _copy(tmp_path: Path, source: Path = OUTPUTS, name: str | None = None) -> Path:
    path = tmp_path / (name or source.name)
    shutil.copy(source, path)
    return path


def _dataset_metrics(path: Path) -> dict[str, Any]:
    result = run("metrics", path, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output.splitlines()[0])


def _labels(db: Path) -> dict[str, dict]:
    database = open_database(db)
    try:
        return {i.id: effective(i.judge, i.human) for i in store_records.iterate(database)}
    finally:
        database.conn.close()


def test_detected_and_listed() -> None:
    assert formats.detect(OUTPUTS) == "ragchecker"
    assert formats.detect(INPUTS) == "ragchecker"
    listed = run("formats")
    assert listed.exit_code == 0 and "ragchecker" in listed.output


def test_a_result_is_a_record_with_claims_and_chunks() -> None:
    _, items = formats.read(OUTPUTS)
    first = next(iter(items))
    rec = first.record  # type: ignore[union-attr]
    assert rec.id == "0" and rec.task == "ragchecker"
    assert rec.question == "What's the longest river in the world?"
    assert [d.id for d in rec.documents] == ["000", "001", "002", "003"]
    assert rec.references[0].startswith("The Nile is a major north-flowing river")
    assert rec.statements[0] == ("s1", "Nile is longest river in the world")
    assert len(rec.statements) == 11 and len(rec.reference_statements) == 22
    judge = first.judge  # type: ignore[union-attr]
    assert judge["answer2response"]["s11"] == "Contradiction"
    assert judge["retrieved2response"]["s1/c1"] == "Entailment"
    assert len(judge["retrieved2answer"]) == 22 * 4
    assert rec.scores["stored.ragchecker.precision"] == 0.7272727272727273


def test_the_inputs_before_checking_import_without_labels(tmp_path: Path) -> None:
    path = _copy(tmp_path, INPUTS)
    result = run("import", path, "--strict")
    assert result.exit_code == 0, result.output
    assert _labels(path.with_suffix(".ragreview.db")) == {"0": {}, "1": {}}


def test_aggregates_exactly_with_and_without_a_round_trip(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    values = _dataset_metrics(path)["effective"]
    assert {k: values[f"ragchecker.{k}"] for k in AGGREGATES} == AGGREGATES
    out = tmp_path / "exported.json"
    assert run("export", path, "--out", out).exit_code == 0
    # nothing overridden: RAGChecker's own file back byte for byte
    assert out.read_bytes() == OUTPUTS.read_bytes()
    again = _dataset_metrics(out)
    assert {k: again["effective"][f"ragchecker.{k}"] for k in AGGREGATES} == AGGREGATES
    per_result = run("metrics", out, "--per-record", "--json")
    stored = {r["query_id"]: r["metrics"] for r in json.loads(OUTPUTS.read_text())["results"]}
    for line in per_result.output.splitlines():
        row = json.loads(line)
        want = {f"ragchecker.{k}": v for k, v in stored[row["id"]].items()}
        assert row["judge"] == want and row["effective"] == want


def test_export_writes_the_labels_and_both_metrics_levels(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    for rid, name, target, value in OVERRIDES:
        result = run("label", path, rid, name, target, value)
        assert result.exit_code == 0, result.output
    reviewed = _dataset_metrics(path)["effective"]
    out = tmp_path / "exported.json"
    assert run("export", path, "--out", out).exit_code == 0, "export"
    doc = json.loads(out.read_text())
    first, second = doc["results"]
    assert first["answer2response"][10] == "Entailment"
    assert first["response2answer"][7] == "Entailment"
    assert second["retrieved2response"][0][0] == "Contradiction"
    assert second["retrieved2answer"][4][0] == "Entailment"
    # the per-result metrics are the reviewed labels' own, the aggregates RAGChecker's
    # rounding of their mean, under the file's group keys
    db = path.with_suffix(".ragreview.db")
    database = open_database(db)
    items = {i.id: i for i in store_records.iterate(database)}
    database.conn.close()
    for result in doc["results"]:
        item = items[result["query_id"]]
        assert result["metrics"] == rc.values(item.record, effective(item.judge, item.human))
    assert set(doc["metrics"]) == {"overall", "retriever", "generator"}
    for key in AGGREGATES:
        group, name = key.split(".")
        assert doc["metrics"][group][name] == reviewed[f"ragchecker.{key}"]
    assert doc["metrics"]["overall"]["precision"] == rc.aggregate([9 / 11, 0.8]) == 80.9
    # and the export re-imports to the same labels
    assert run("import", out, "--db", tmp_path / "again.db", "--strict").exit_code == 0
    assert _labels(tmp_path / "again.db") == _labels(db)
    # everything else as read
    original = json.loads(OUTPUTS.read_text())
    for before, after in zip(original["results"], doc["results"], strict=True):
        for field in ("query_id", "query", "gt_answer", "response", "retrieved_context"):
            assert before[field] == after[field]


def test_the_current_aggregate_spelling_is_read_and_kept(tmp_path: Path) -> None:
    doc = json.loads(OUTPUTS.read_text())
    doc["metrics"] = {f"{group}_metrics": values for group, values in doc["metrics"].items()}
    path = tmp_path / "current.json"
    path.write_text(json.dumps(doc, indent=2))
    assert formats.detect(path) == "ragchecker"
    assert run("label", path, "0", "answer2response", "s11", "Entailment").exit_code == 0
    out = tmp_path / "exported.json"
    assert run("export", path, "--out", out).exit_code == 0
    written = json.loads(out.read_text())["metrics"]
    assert set(written) == {"overall_metrics", "retriever_metrics", "generator_metrics"}
    assert written["overall_metrics"]["precision"] == 80.9
    assert written["generator_metrics"]["hallucination"] == 0.0  # s11 was the one
    assert written["retriever_metrics"] == doc["metrics"]["retriever_metrics"]


def test_reviewed_only_export_aggregates_the_exported_results(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    assert run("mark", path, "1", "--reviewed").exit_code == 0
    out = tmp_path / "exported.json"
    assert run("export", path, "--out", out, "--reviewed-only").exit_code == 0
    doc = json.loads(out.read_text())
    assert [r["query_id"] for r in doc["results"]] == ["1"]
    assert doc["metrics"]["overall"]["precision"] == 80.0  # result 1 alone: 4/5


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("answer2response", ["Entailment"], "expected a list of one entry per response_claims"),
        ("response2answer", None, None),  # not checked yet: imports without that label
        ("retrieved2response", [["Neutral"]] * 5, "expected one verdict per retrieved chunk"),
    ],
)
def test_a_bad_result_is_named_and_the_other_imports(
    tmp_path: Path, field: str, value: Any, message: str | None
) -> None:
    doc = json.loads(OUTPUTS.read_text())
    doc["results"][1][field] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc, indent=2))
    result = run("import", path)
    if message is None:
        assert result.exit_code == 0, result.output
        assert field not in _labels(path.with_suffix(".ragreview.db"))["1"]
        return
    assert result.exit_code != 0
    assert "bad.json:" in result.output and f"results[1].{field}" in result.output
    assert message in result.output and "Traceback" not in result.output
    assert set(_labels(path.with_suffix(".ragreview.db"))) == {"0"}


def test_a_verdict_outside_the_three_is_named_with_its_line(tmp_path: Path) -> None:
    doc = json.loads(OUTPUTS.read_text())
    doc["results"][0]["retrieved2answer"][2][1] = "Supported"
    path = tmp_path / "bad.json"
    text = json.dumps(doc, indent=2)
    path.write_text(text)
    result = run("import", path)
    assert result.exit_code != 0
    assert "results[0].retrieved2answer[2][1]" in result.output
    assert '"Supported"' in result.output
    line = next(n for n, row in enumerate(text.splitlines(), 1) if '"Supported"' in row)
    assert f":{line}:" in result.output or f"line {line}" in result.output, result.output


def test_a_result_without_chunks_has_claim_recall_undefined_as_nan(tmp_path: Path) -> None:
    """RAGChecker writes NaN for the mean of nothing (computation.py's claim_recall of a
    result whose ground-truth claims have no chunk to be checked against)."""
    doc = json.loads(OUTPUTS.read_text())
    result = doc["results"][1]
    result["retrieved_context"] = []
    result["retrieved2response"] = [[] for _ in result["response_claims"]]
    result["retrieved2answer"] = [[] for _ in result["gt_answer_claims"]]
    result["metrics"].update(
        claim_recall=float("nan"), context_precision=0.0, context_utilization=0.0,
        noise_sensitivity_in_relevant=0.0, noise_sensitivity_in_irrelevant=0.0,
        hallucination=0.0, self_knowledge=0.0, faithfulness=0.0,
    )  # fmt: skip
    doc["metrics"]["retriever"]["claim_recall"] = float("nan")
    path = tmp_path / "nochunks.json"
    path.write_text(json.dumps(doc, indent=2))
    assert run("import", path, "--strict").exit_code == 0
    rows = run("metrics", path, "--per-record", "--json").output.splitlines()
    second = json.loads(rows[1])
    assert second["judge"]["ragchecker.claim_recall"] is None
    assert second["judge"]["ragchecker.precision"] == 0.8
    summary = _dataset_metrics(path)
    assert summary["undefined"]["judge"] == {"ragchecker.claim_recall": 1}
    assert summary["judge"]["ragchecker.retriever.claim_recall"] is None  # NaN in numpy
    # an override elsewhere: the NaN stays NaN in both the result and the aggregate
    assert run("label", path, "1", "answer2response", "s1", "Entailment").exit_code == 0
    out = tmp_path / "exported.json"
    assert run("export", path, "--out", out).exit_code == 0
    text = out.read_text()
    written = json.loads(text)
    assert (
        written["results"][1]["metrics"]["claim_recall"]
        != written["results"][1]["metrics"]["claim_recall"]
    )
    assert written["results"][1]["metrics"]["precision"] == 1.0
    assert '"claim_recall": NaN' in text
    assert written["metrics"]["overall"]["precision"] == rc.aggregate([8 / 11, 1.0])


def test_nan_outside_the_metrics_is_an_error(tmp_path: Path) -> None:
    doc = json.loads(OUTPUTS.read_text())
    doc["results"][0]["retrieved_context"][0]["score"] = float("nan")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc, indent=2))
    result = run("import", path)
    assert result.exit_code != 0
    assert "results[0].retrieved_context[0].score" in result.output
    assert "not a finite number" in result.output


@pytest.mark.parametrize("suffix", ["", "_metrics"])
def test_the_files_aggregates_are_compared_with_the_recomputed_ones(
    tmp_path: Path, suffix: str
) -> None:
    doc = json.loads(OUTPUTS.read_text())
    doc["metrics"] = {group + suffix: values for group, values in doc["metrics"].items()}
    doc["metrics"]["overall" + suffix]["f1"] = 68.4  # one stated value off by 0.1
    path = tmp_path / "stated.json"
    path.write_text(json.dumps(doc, indent=2))
    from ragreview.services import source_aggregates

    assert run("import", path).exit_code == 0
    database = open_database(path.with_suffix(".ragreview.db"))
    try:
        rows = source_aggregates.compare(database, "stated")
    finally:
        database.conn.close()
    assert set(rows) == {f"ragchecker.{k}" for k in AGGREGATES}
    assert rows["ragchecker.overall.precision"] == {
        "n": 1, "disagree": 0, "max_abs_diff": 0.0, "rmse": 0.0
    }  # fmt: skip
    assert rows["ragchecker.overall.f1"]["disagree"] == 1
    assert rows["ragchecker.overall.f1"]["max_abs_diff"] == pytest.approx(0.1)
    table = run("metrics", path)
    assert table.exit_code == 0 and "ragchecker.overall.f1" in table.output


def test_a_label_on_an_unchecked_array_is_refused_by_name(tmp_path: Path) -> None:
    doc = json.loads(OUTPUTS.read_text())
    del doc["results"][0]["answer2response"]  # extracted, not yet checked
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(doc, indent=2))
    assert run("label", path, "0", "answer2response", "s1", "Neutral").exit_code == 0
    out = tmp_path / "exported.json"
    refused = run("export", path, "--out", out)
    assert refused.exit_code != 0 and not out.exists()
    assert "answer2response (1 record: '0')" in refused.output
    assert "--as ragreview" in refused.output
