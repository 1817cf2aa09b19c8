"""``export --as ragas-annotation | mlflow-assessments | fewshot`` (docs/align.md):
each checked field by field against the target tool's documented schema, and the
ragas annotation file imported again by ragreview's own reader, equal."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from ragreview import formats

from .agreement_helpers import quick, run

# ragas.dataset_schema (v0.2): SampleAnnotation and PromptAnnotation, field -> types
SAMPLE_ANNOTATION = {
    "metric_input": (dict,),
    "metric_output": (float, int),
    "prompts": (dict,),
    "is_accepted": (bool,),
    "target": (float, int, type(None)),  # optional
}
PROMPT_ANNOTATION = {
    "prompt_input": (dict,),
    "prompt_output": (dict,),
    "is_accepted": (bool,),
    "edited_output": (dict, type(None)),
}
# mlflow/protos/assessments.proto, message Assessment (JSON names = proto field names)
ASSESSMENT_FIELDS = {
    "assessment_id", "assessment_name", "trace_id", "span_id", "source", "create_time",
    "last_update_time", "feedback", "expectation", "rationale", "error", "metadata",
}  # fmt: skip
SOURCE_TYPES = {"SOURCE_TYPE_UNSPECIFIED", "HUMAN", "LLM_JUDGE", "CODE"}
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def _reviewed_dataset(tmp_path: Path, fixtures_dir: Path) -> Path:
    path = tmp_path / "rb.jsonl"
    shutil.copy(fixtures_dir / "handwritten" / "ragbench" / "covidqa_test_rows.jsonl", path)
    quick("import", str(path))
    quick("label", str(path), "covidqa-17", "supported", "a", "false", "--reviewer", "ann",
          "--reason", "IL-6 is not said to drive it")  # fmt: skip
    quick("label", str(path), "covidqa-17", "relevant", "0c", "true", "--reviewer", "ann")
    return path


def _export(path: Path, fmt: str, out: Path) -> str:
    proc = run("export", str(path), "--as", fmt, "--out", str(out))
    return proc.stderr


def test_ragas_annotation_matches_metric_annotation_and_reimports_equal(tmp_path, fixtures_dir):
    path = _reviewed_dataset(tmp_path, fixtures_dir)
    out = tmp_path / "annotation.json"
    assert "wrote 2 items" in _export(path, "ragas-annotation", out)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(doc) == ["relevant", "supported"]  # MetricAnnotation: {metric: [samples]}
    for samples in doc.values():
        for sample in samples:
            assert set(sample) == set(SAMPLE_ANNOTATION)
            for field, types in SAMPLE_ANNOTATION.items():
                assert isinstance(sample[field], types), field
            for prompt in sample["prompts"].values():
                assert set(prompt) == set(PROMPT_ANNOTATION)
                for field, types in PROMPT_ANNOTATION.items():
                    assert isinstance(prompt[field], types), field
            assert set(sample["metric_input"]) == {"user_input", "retrieved_contexts", "response"}
    (supported,) = doc["supported"]
    assert (supported["metric_output"], supported["target"], supported["is_accepted"]) == (
        1.0, 0.0, False
    )  # fmt: skip
    prompt = supported["prompts"]["ragreview_judge_prompt"]
    assert prompt["edited_output"]["verdict"] == 0
    assert prompt["edited_output"]["reason"] == "IL-6 is not said to drive it"
    assert prompt["prompt_output"]["verdict"] == 1

    fmt, items = formats.read(out)  # ragreview's own reader of the format
    read = [i for i in items if hasattr(i, "record")]
    assert fmt == "ragas" and len(read) == 2
    exported = [s for name in doc for s in doc[name]]
    for item, sample in zip(read, exported):
        assert item.record.question == sample["metric_input"]["user_input"]
        assert item.record.response_text == sample["metric_input"]["response"]
        assert [" ".join(t for _, t in d.sentences) for d in item.record.documents] == sample[
            "metric_input"
        ]["retrieved_contexts"]
        assert item.judge["verdict"]["*"] == bool(sample["metric_output"])
        assert item.human["verdict"]["*"] == bool(sample["target"])


def test_mlflow_assessments_follow_the_assessment_proto(tmp_path, fixtures_dir):
    path = _reviewed_dataset(tmp_path, fixtures_dir)
    out = tmp_path / "assessments.jsonl"
    assert "wrote 2 items" in _export(path, "mlflow-assessments", out)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [a["assessment_name"] for a in lines] == ["relevant", "supported"]
    for a in lines:
        assert set(a) <= ASSESSMENT_FIELDS
        assert "." not in a["assessment_name"]  # the proto: the name must not contain "."
        assert a["source"]["source_type"] in SOURCE_TYPES and a["source"]["source_type"] == "HUMAN"
        assert a["source"]["source_id"] == "ann"
        assert set(a["feedback"]) == {"value"}
        assert isinstance(a["feedback"]["value"], (bool, int, float, str, list))
        assert all(isinstance(v, str) for v in a["metadata"].values())  # map<string, string>
        assert RFC3339.match(a["create_time"])
        assert a["trace_id"] == "covidqa-17"
    relevant, supported = lines
    assert supported["feedback"]["value"] is False
    assert supported["rationale"] == "IL-6 is not said to drive it"
    assert supported["metadata"]["ragreview.judge_value"] == "true"
    assert "rationale" not in relevant  # no reason given


def test_fewshot_lines(tmp_path, fixtures_dir):
    path = _reviewed_dataset(tmp_path, fixtures_dir)
    out = tmp_path / "fewshot.jsonl"
    assert "wrote 2 items" in _export(path, "fewshot", out)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        assert set(line) == {"input", "judge_output", "corrected_output", "reason", "rule"}
    supported = lines[1]
    assert supported["input"]["label"] == "supported" and supported["input"]["target"] == "a"
    assert supported["input"]["item"].startswith("Prolonged inflammation")
    assert supported["judge_output"] == {
        "value": True,
        "reason": "The sentence is backed by the documents.",
    }
    assert supported["corrected_output"] == {"value": False}
    assert supported["reason"] == "IL-6 is not said to drive it"
    assert supported["rule"] is None
