"""Hostile text on output: escape sequences in ids, text and reviewer names never reach
the terminal; CSV cells never run as formulas; JSON exports keep the text exactly."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.conftest import in_process

from .agreement_helpers import trace_record, write_jsonl

CLEAR = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;pwned\x07"
CLIPBOARD = "\x1b]52;c;ZXZpbA==\x07"  # OSC 52: writes "evil" to the clipboard
EVIL_ID = f"esc{CLEAR}{TITLE}-1"
EVIL_REVIEWER = f"{CLIPBOARD}eve"
FORMULAS = ("=cmd|' /C calc'!A0", "+SUM(1+1)", "@SUM(A1)", "-2+3")
UNSAFE = ("\x1b", "\x07", "\x9b", "\x9d")


def assert_clean(*outputs: str) -> None:
    for out in outputs:
        for ch in UNSAFE:
            assert ch not in out, (ch, out)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    evil = trace_record(EVIL_ID)
    evil["question"] = f"What {CLEAR}now{TITLE}?"
    records = [evil, *(trace_record(rid) for rid in FORMULAS)]
    return write_jsonl(tmp_path / "hostile.jsonl", records)


def test_log_metrics_sample_print_no_escape_sequences(hostile, run_cli):
    label = run_cli(
        "label", hostile, EVIL_ID, "relevant", "0b", "true",
        "--reviewer", EVIL_REVIEWER, "--reason", f"see {TITLE}this",
    )  # fmt: skip
    assert label.returncode == 0, label.stderr
    log = run_cli("log", hostile)
    assert log.returncode == 0, log.stderr
    assert_clean(log.stdout, log.stderr, label.stdout)
    assert "eve" in log.stdout and "esc-1" in log.stdout and "see this" in log.stdout
    per_record = run_cli("metrics", hostile, "--per-record")
    assert per_record.returncode == 0, per_record.stderr
    assert_clean(per_record.stdout)
    assert "esc-1" in per_record.stdout
    drawn = run_cli("sample", hostile, "--n", "5")
    assert_clean(drawn.stdout)
    assert "esc-1" in drawn.stdout.splitlines()
    undo = run_cli("undo", hostile, "--reviewer", EVIL_REVIEWER)
    assert undo.returncode == 0 and "esc-1" in undo.stdout
    assert_clean(undo.stdout)
    # --json keeps the text exactly: JSON escapes the control characters itself
    events = [json.loads(x) for x in run_cli("log", hostile, "--json").stdout.splitlines()]
    assert events[0]["record"] == EVIL_ID and events[0]["reviewer"] == EVIL_REVIEWER


def test_merge_and_conflicts_print_reviewer_names_without_escapes(hostile, run_cli, tmp_path):
    dbs = []
    for n, value in enumerate(("true", "false")):
        db = tmp_path / f"r{n}.db"
        who = f"{CLIPBOARD}rev{n}{TITLE}"
        # the setup in process (its output is not what this test reads)
        assert in_process(["import", hostile, "--db", db], tmp_path).exit_code == 0
        label = ["label", db, EVIL_ID, "relevant", "0b", value, "--reviewer", who]
        assert in_process(label, tmp_path).exit_code == 0
        mark = ["mark", db, EVIL_ID, "--reviewed", "--reviewer", who]
        assert in_process(mark, tmp_path).exit_code == 0
        dbs.append(db)
    merged = run_cli("merge", *dbs, "--into", tmp_path / "all.db")
    assert merged.returncode == 0, merged.stderr
    assert_clean(merged.stdout, merged.stderr)
    assert "rev0" in merged.stdout and "rev1" in merged.stdout
    found = run_cli("conflicts", tmp_path / "all.db")
    assert found.returncode == 0, found.stderr
    assert_clean(found.stdout)
    assert "esc-1 relevant 0b: rev0=true rev1=false" in found.stdout
    report = run_cli("agreement", tmp_path / "all.db")
    assert report.returncode == 0, report.stderr
    assert_clean(report.stdout)


def test_csv_export_defuses_formulas_and_json_keeps_the_text(hostile, tmp_path):
    # the files are what this test reads: the exports run in process
    out = tmp_path / "out.csv"
    proc = in_process(["export", hostile, "--out", out, "--as", "csv"], tmp_path)
    assert proc.exit_code == 0, proc.stderr
    raw = out.read_text(encoding="utf-8")
    assert_clean(raw)
    ids = [row["id"] for row in csv.DictReader(io.StringIO(raw))]
    assert ids == ["esc-1", *("'" + f for f in FORMULAS)]
    for row in csv.reader(io.StringIO(raw)):
        assert not row[0].startswith(("=", "+", "-", "@", "\t", "\r")), row
    gold = tmp_path / "gold.jsonl"
    assert (
        in_process(["export", hostile, "--out", gold, "--as", "ragreview"], tmp_path).exit_code == 0
    )
    exported = [json.loads(line) for line in gold.read_text().splitlines()]
    assert [r["id"] for r in exported] == [EVIL_ID, *FORMULAS]
    assert exported[0]["question"] == f"What {CLEAR}now{TITLE}?"
