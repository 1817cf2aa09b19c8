"""``import ragreview; ragreview.open(...)``: the Python API over the same library
functions as the CLI (docs/python.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

import ragreview
from ragreview.core.errors import InputError, RagreviewError
from tests.conftest import REPO_ROOT, subprocess_env
from tests.formats.helpers import run

DEMO = REPO_ROOT / "fixtures" / "demo.jsonl"
IRG = REPO_ROOT / "fixtures" / "inspectorraget" / "clapnq_v1.json"


def test_import_ragreview_stays_light(tmp_path) -> None:
    heavy = ("textual", "click", "openai", "nltk", "pyarrow", "pandas", "sqlite_utils")
    code = f"import sys, ragreview; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(tmp_path)
    )
    assert out.stdout.strip() == "[]", out.stderr


@pytest.fixture
def demo(tmp_path):
    path = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, path)
    return path


def test_the_api_and_the_cli_see_the_same_dataset(demo) -> None:
    ds = ragreview.open(demo)
    assert ds.name == "demo" and ds.path == demo.with_name("demo.ragreview.db")
    records = ds.records()
    assert [r["id"] for r in records] == [
        json.loads(x)["id"] for x in demo.read_text().splitlines()
    ]
    assert records[0]["status"] == "unreviewed"
    per_record = run("metrics", demo, "--per-record", "--json").stdout.splitlines()
    assert ds.metrics(per_record=True) == [json.loads(line) for line in per_record]
    assert ds.metrics() == json.loads(run("metrics", demo, "--json").stdout)
    # a label through the API is a label for the CLI, and the other way round
    ds.label("covid-1", "utilized", "0c", True, reviewer="alice", reason="used")
    log = [json.loads(x) for x in run("log", demo, "--json").stdout.splitlines()]
    assert log[-1]["reviewer"] == "alice" and log[-1]["reason"] == "used"
    assert run("label", demo, "covid-1", "relevant", "0c", "false").exit_code == 0
    human = ds.labels(layer="human")
    assert {"id": "covid-1", "name": "utilized", "target": "0c", "value": True} in human
    assert {"id": "covid-1", "name": "relevant", "target": "0c", "value": False} in human
    judge = ds.labels(layer="judge")
    effective = ds.labels()
    assert len(effective) >= len(judge) and all(
        set(r) == {"id", "name", "target", "value"} for r in effective
    )
    ds.label("covid-1", "utilized", "0c", None)  # back to the judge's
    assert {"id": "covid-1", "name": "utilized", "target": "0c", "value": True} not in ds.labels(
        layer="human"
    )
    ds.close()
    again = ragreview.open(demo.with_name("demo.ragreview.db"))  # the database itself
    assert again.name == "demo" and len(again.records()) == len(records)


def test_frames(demo) -> None:
    pandas = pytest.importorskip("pandas")
    ds = ragreview.open(demo)
    records = ds.records(frame=True)
    assert isinstance(records, pandas.DataFrame) and list(records["id"])[:2] == [
        "covid-1",
        "covid-2",
    ]
    per_record = ds.metrics(per_record=True, frame=True)
    assert "judge.trace.relevance" in per_record.columns and len(per_record) == len(records)
    summary = ds.metrics(frame=True)
    assert set(summary.columns) == {"metric", "judge", "effective"}
    labels = ds.labels(layer="judge", frame=True)
    assert list(labels.columns) == ["id", "name", "target", "value"]


def test_export_and_errors(demo, tmp_path) -> None:
    ds = ragreview.open(demo)
    assert ds.export(tmp_path / "out.jsonl") == len(ds.records())
    written = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert written == [json.loads(x) for x in demo.read_text().splitlines()]
    assert ds.export(tmp_path / "out.parquet", format="parquet") == len(ds.records())
    with pytest.raises(RagreviewError, match="no label layer 'bob'"):
        ds.labels(layer="bob")
    with pytest.raises(RagreviewError, match="no such file"):
        ragreview.open(tmp_path / "missing.jsonl")
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"what": 1}\n')
    with pytest.raises(InputError, match="cannot tell the format"):
        ragreview.open(odd)
    assert not odd.with_name("odd.ragreview.db").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(demo.read_text() + '{"id": "x", "labels": {"judge": {"relevant": 3}}}\n')
    with pytest.raises(RagreviewError, match="1 invalid record,"):
        ragreview.open(bad, strict=True)
    assert not bad.with_name("bad.ragreview.db").exists()
    loose = ragreview.open(bad)
    assert len(loose.errors) == 1 and "labels.judge.relevant" in str(loose.errors[0])


def test_annotator_layers_by_name(tmp_path) -> None:
    path = tmp_path / IRG.name
    shutil.copy(IRG, path)
    ds = ragreview.open(path, strict=True)
    mine = ds.labels(layer="46542882")
    doc = json.loads(IRG.read_text())
    want = sum(1 for e in doc["evaluations"] if "46542882" in e["annotations"]["fluency"])
    assert sum(1 for r in mine if r["name"] == "fluency") == want
