"""Humans first (docs/align.md): with two human layers the agreement report starts
with reviewer-vs-reviewer κ per label, with a bootstrap interval, beside the judge's
κ against the reviewers, and flags labels where the humans agree less with each other
than the judge agrees with them. Hand-computed on a hand-made merged review."""

from __future__ import annotations

import json

import pytest

from .agreement_helpers import quick, run, trace_record, write_jsonl


@pytest.fixture
def merged(tmp_path):
    path = write_jsonl(
        tmp_path / "res.jsonl",
        [trace_record(f"t{i}", supported={"a": True, "b": False}) for i in range(1, 5)],
    )
    dbs = {name: tmp_path / f"{name}.db" for name in ("ann", "bob")}
    for who, db in dbs.items():
        quick("import", str(path), "--db", str(db))
        for i in range(1, 5):
            if who == "bob" and i <= 2:  # bob: t1's and t2's sentence a is not supported
                quick("label", str(db), f"t{i}", "supported", "a", "false", "--reviewer", who)
            quick("mark", str(db), f"t{i}", "--reviewed", "--reviewer", who)
    into = tmp_path / "merged.db"
    run("merge", str(dbs["ann"]), str(dbs["bob"]), "--into", str(into))
    return into


def test_report_starts_with_the_humans_and_flags_where_they_agree_less(merged):
    report = json.loads(run("agreement", str(merged), "--json").stdout)
    assert next(iter(report)) == "humans_first"
    block = report["humans_first"]
    assert block["reviewers"] == ["ann", "bob"] and block["records"] == 4
    supported = block["labels"]["supported"]
    # items (ann, bob): t1 (T,F) (F,F); t2 (T,F) (F,F); t3, t4 (T,T) (F,F): p_o 6/8,
    # p_e (4/8)(2/8) + (4/8)(6/8) = 1/2, κ = (3/4 − 1/2)/(1/2) = 1/2
    assert supported["statistic"] == "kappa" and supported["items"] == 8
    assert supported["value"] == pytest.approx(0.5)
    assert supported["ci_low"] <= 0.5 <= supported["ci_high"]
    # the judge: κ 1 with ann (she kept every verdict), 1/2 with bob; mean 3/4 > 1/2
    assert supported["judge_kappa_by_reviewer"] == {"ann": 1.0, "bob": pytest.approx(0.5)}
    assert supported["judge_kappa"] == pytest.approx(0.75)
    assert supported["humans_below_judge"] is True
    relevant = block["labels"]["relevant"]
    assert relevant["value"] == 1.0 and relevant["judge_kappa"] == 1.0
    assert relevant["humans_below_judge"] is False  # equal is not less
    assert any("agree less with each other" in w and "supported" in w for w in report["warnings"])

    text = run("agreement", str(merged)).stdout
    assert text.index("Humans first") < text.index("Labels: judge vs reviewer")
    assert "humans agree less than the judge" in text


def test_no_block_with_one_human_layer(tmp_path):
    path = write_jsonl(tmp_path / "one.jsonl", [trace_record("t1")])
    quick("mark", str(path), "t1", "--reviewed")
    report = json.loads(run("agreement", str(path), "--json").stdout)
    assert "humans_first" not in report
