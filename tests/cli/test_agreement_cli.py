"""``ragreview agreement`` and ``sample`` end to end on real SQLite files."""

from __future__ import annotations

import json

import pytest

from ragreview.store import history, open_database
from ragreview.store import records as store_records

from .agreement_helpers import fact_record, quick, run, trace_record, write_jsonl

LABEL_KEYS = {"n", "accuracy", "kappa", "precision", "recall", "f1", "tpr", "tnr", "confusion"}


@pytest.fixture
def reviewed_file(tmp_path):
    path = write_jsonl(
        tmp_path / "res.jsonl",
        [
            trace_record("t1", relevant=("0a", "0b")),
            trace_record("t2", relevant=("0a",)),
            trace_record("t3", relevant=("0a", "0b", "0c")),  # never reviewed: not counted
            fact_record("f1", {"f1": "S", "f2": "S", "f3": "IR"}),
        ],
    )
    quick("import", str(path))
    quick("label", str(path), "t1", "relevant", "0b", "false", "--reviewer", "ann")
    quick("label", str(path), "t1", "relevant", "0c", "true", "--reviewer", "ann")
    quick("label", str(path), "t2", "supported", "b", "false", "--reviewer", "ann")
    quick("label", str(path), "t3", "relevant", "0a", "false", "--reviewer", "ann")
    quick("label", str(path), "f1", "fact", "f2", "NS", "--reviewer", "ann")
    for rid in ("t1", "t2", "f1"):
        quick("mark", str(path), rid, "--reviewed", "--reviewer", "ann")
    return path


def test_agreement_json_shape_and_hand_computed_values(reviewed_file):
    report = json.loads(run("agreement", str(reviewed_file), "--json").stdout)
    assert {"labels", "metrics"} <= set(report)
    for block in report["labels"].values():
        assert set(block) == LABEL_KEYS
        assert set(block["confusion"]) == {"tp", "fp", "fn", "tn"}
    for block in report["metrics"].values():
        assert set(block) == {
            "n", "judge_mean", "effective_mean", "bias", "ci_low", "ci_high",
            "pearson", "spearman", "rmse",
        }  # fmt: skip
    rel = report["labels"]["relevant"]
    # t1: 0a TT, 0b TF, 0c FT; t2: 0a TT, 0b FF, 0c FF (t3 unreviewed)
    assert rel["confusion"] == {"tp": 2, "fp": 1, "fn": 1, "tn": 2}
    assert rel["kappa"] == pytest.approx(1 / 3)
    assert rel["tpr"] == pytest.approx(2 / 3) and rel["tnr"] == pytest.approx(2 / 3)
    sup = report["labels"]["supported"]
    # t1 a TT b TT, t2 a TT b TF -> 3 TP, 1 FP; no negative by the human: TNR 0
    assert sup["confusion"] == {"tp": 3, "fp": 1, "fn": 0, "tn": 0}
    assert sup["tnr"] == 0.0 and sup["precision"] == pytest.approx(0.75)
    assert report["labels"]["fact"]["confusion"] == {"tp": 1, "fp": 1, "fn": 0, "tn": 1}
    assert report["multiclass"]["fact"]["matrix"] == {"S": {"S": 1, "NS": 1}, "IR": {"IR": 1}}
    assert report["records"] == 3
    assert report["independent"]["records"] == 0
    assert any("under 30): relevant 6," in w for w in report["warnings"])


def test_agreement_human_output_is_a_table(reviewed_file):
    out = run("agreement", str(reviewed_file)).stdout
    assert "Labels: judge vs reviewer" in out
    assert "relevant" in out and "2 1 1 2" in out
    assert "warning:" in out


def test_blind_first_pass_is_independent_agreement(tmp_path):
    path = write_jsonl(tmp_path / "b.jsonl", [trace_record("t1", relevant=("0a", "0b"))])
    quick("import", str(path))
    db = open_database(tmp_path / "b.ragreview.db")
    rowid = store_records.find(db, "t1").rowid
    # blind: the reviewer marks 0a and 0c relevant without seeing the judge
    history.set_label(db, rowid, "relevant", "0a", True, "ann", blind=True)
    history.set_label(db, rowid, "relevant", "0c", True, "ann", blind=True)
    # revealed: they accept the judge's 0b as well
    history.set_label(db, rowid, "relevant", "0b", True, "ann")
    history.mark(db, rowid, "reviewed", "ann")
    report = json.loads(run("agreement", str(path), "--json").stdout)
    ind = report["independent"]
    assert ind["records"] == 1
    # blind 0a T, 0b F (default), 0c T vs judge T, T, F
    assert ind["labels"]["relevant"]["confusion"] == {"tp": 1, "fp": 1, "fn": 1, "tn": 0}
    assert set(ind["labels"]) == {"relevant"}
    # after reveal: 0a TT, 0b TT, 0c FT
    assert report["labels"]["relevant"]["confusion"] == {"tp": 2, "fp": 0, "fn": 1, "tn": 0}


def test_sample_is_seeded_stratified_and_reported(tmp_path):
    records = [trace_record(f"t{i}") for i in range(12)] + [
        fact_record(f"f{i}", {"f1": "S"}) for i in range(8)
    ]
    path = write_jsonl(tmp_path / "s.jsonl", records)
    quick("import", str(path))
    first = run("sample", str(path), "--n", "5", "--by", "task", "--seed", "3")
    ids = first.stdout.split()
    assert len(ids) == 5
    assert sum(i.startswith("t") for i in ids) == 3  # 12/20·5 = 3, 8/20·5 = 2
    assert "stratified by task, seed 3" in first.stderr
    again = run("sample", str(path), "--n", "5", "--by", "task", "--seed", "3").stdout.split()
    assert again == ids
    # review two sampled records and one outside the sample
    outside = next(r["id"] for r in records if r["id"] not in ids)
    for rid in (ids[0], ids[-1], outside):
        quick("mark", str(path), rid, "--reviewed", "--reviewer", "ann")
    report = json.loads(run("agreement", str(path), "--json").stdout)
    sample = report["sample"]
    assert (sample["n"], sample["by"], sample["seed"], sample["population"]) == (5, "task", 3, 20)
    assert sample["method"] == "stratified (proportional)"
    assert sample["reviewed"] == 2 and sample["reviewed_outside_sample"] == 1
    assert sample["strata"]["trace"]["population"] == 12
    assert sample["strata"]["longform"]["drawn"] == 2
    assert sample["restricted_to_sample"] is True
    assert report["records"] == 2
    everything = json.loads(run("agreement", str(path), "--json", "--all-reviewed").stdout)
    assert everything["records"] == 3
    assert any("outside the sample" in w for w in everything["warnings"])


def test_sample_errors_are_one_clean_line(tmp_path):
    path = write_jsonl(tmp_path / "e.jsonl", [trace_record("t1")])
    quick("import", str(path))
    proc = run("sample", str(path), "--n", "5", check=False)
    assert proc.returncode == 1
    assert "has only 1 records" in proc.stderr and "Traceback" not in proc.stderr
    proc = run("sample", str(path), "--n", "1", "--by", "nosuch", check=False)
    assert proc.returncode == 1 and "no record" in proc.stderr


def test_export_reviewed_only_records_review_metadata(reviewed_file, tmp_path):
    quick("settings", str(reviewed_file), "longform.k=64")
    out = tmp_path / "gold.jsonl"
    run("export", str(reviewed_file), "--out", str(out), "--as", "ragreview", "--reviewed-only")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["t1", "t2", "f1"]
    review = rows[0]["review"]
    assert review["reviewer"] == "ann" and review["status"] == "reviewed"
    assert review["reviewed_at"].startswith("20")
    assert review["variant"]["longform.k"] == 64
    assert review["variant"]["trace.variant"] == "ragbench"
    assert rows[0]["labels"]["human"]["relevant"] == {"0b": False, "0c": True}
    full = tmp_path / "all.jsonl"
    run("export", str(reviewed_file), "--out", str(full), "--as", "ragreview")
    assert all("review" not in json.loads(line) for line in full.read_text().splitlines())


def test_metric_agreement_end_to_end(reviewed_file):
    """Judge vs reviewed per-record metrics through the metrics engine (when built)."""
    pytest.importorskip("ragreview.core.metrics")
    report = json.loads(run("agreement", str(reviewed_file), "--json").stdout)
    rel = report["metrics"]["trace.relevance"]
    # t1: judge {0a, 0b} of 3 sentences, reviewed {0a, 0c}: 2/3 both; t2: 1/3 both
    assert rel["n"] == 2
    assert rel["judge_mean"] == pytest.approx(0.5)
    assert rel["bias"] == pytest.approx(0.0)
    assert rel["rmse"] == pytest.approx(0.0)
    adh = report["metrics"]["trace.adherence"]
    # t2's response sentence b is unsupported after review: adherence 1 -> 0
    assert (adh["judge_mean"], adh["effective_mean"]) == (1.0, 0.5)
    assert adh["bias"] == pytest.approx(0.5)
    assert (adh["ci_low"], adh["ci_high"]) == (0.0, 1.0)  # diffs {0, 1}, see the stats tests
    assert adh["pearson"] is None  # the judge's values are constant
    assert adh["rmse"] == pytest.approx(0.5**0.5)


def test_bootstrap_is_reproducible_and_its_seed_must_not_be_negative(reviewed_file):
    first = run("agreement", str(reviewed_file), "--json", "--seed", "5", "--resamples", "300")
    again = run("agreement", str(reviewed_file), "--json", "--seed", "5", "--resamples", "300")
    assert json.loads(first.stdout)["metrics"] == json.loads(again.stdout)["metrics"]
    assert json.loads(first.stdout)["bootstrap"] == {"seed": 5, "resamples": 300, "level": 0.95}
    refused = run("agreement", str(reviewed_file), "--seed", "-1", check=False)
    assert refused.returncode == 2 and "--seed" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_agreement_json_loads_no_logging(reviewed_file):
    """``agreement --json`` reads its pages ahead on a plain thread (``store.read_ahead``),
    not through ``concurrent.futures``, whose import of ``logging`` nothing else of the
    report needs (7-17 ms of its start-up, issue 27)."""
    import subprocess
    import sys

    from .agreement_helpers import ROOT

    code = (
        "import sys\n"
        "from ragreview.cli import cli\n"
        f"try:\n    cli(['agreement', {str(reviewed_file)!r}, '--json'])\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in ('logging', 'concurrent.futures') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert json.loads(done.stdout.splitlines()[0])["records"] == 3
    assert done.stdout.splitlines()[-1] == "[]"
