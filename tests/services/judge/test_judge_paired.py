"""``agreement --runs`` compares two runs paired on the same reviewed records
(docs/align.md): its base and candidate numbers are the per-run blocks' numbers, and
swapping the runs negates every difference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragreview.cli import cli
from ragreview.services.judge.tasks import default_template

from .helpers import judge_args


@pytest.fixture
def cli_run(tmp_path: Path):
    runner = CliRunner(env={"USER": "tester", "HOME": str(tmp_path)})

    def invoke(*args: str, code: int = 0) -> str:
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result.output

    return invoke


def test_paired_block_matches_the_runs_and_flips_when_swapped(
    judge_server, trace_file, tmp_path, cli_run
):
    path = str(trace_file)
    cli_run(*judge_args(trace_file, judge_server))
    doubt = tmp_path / "doubt.txt"
    doubt.write_text("DOUBT EVERYTHING\n" + default_template("trace"))
    for i in range(8):  # the reviewer: only q*'s sentence a is supported, b not
        cli_run("label", path, f"q{i}", "supported", "a", "true")
        cli_run("mark", path, f"q{i}", "--reviewed")
    cli_run(*judge_args(trace_file, judge_server, "--prompt", str(doubt)))

    report = json.loads(cli_run("agreement", path, "--runs", "--json"))
    first, second = (r["id"] for r in report["runs"])
    block = report["paired"]
    assert (block["base"], block["candidate"]) == (first, second)
    assert block["records"] == 8
    by_id = {r["id"]: r for r in report["runs"]}
    supported = block["labels"]["supported"]
    for stat in ("kappa", "tpr", "tnr"):
        assert supported[stat]["base"] == by_id[first]["labels"]["supported"][stat]
        assert supported[stat]["candidate"] == by_id[second]["labels"]["supported"][stat]
    # the first run matches the reviewer on every sentence (κ 1), the doubting one (κ 0) calls
    # every sentence unsupported: TPR 1 -> 0 on all 8 records, an interval of one point
    assert supported["kappa"]["base"] == 1.0 and supported["kappa"]["candidate"] == 0.0
    assert supported["tpr"]["delta"] == -1.0
    assert (supported["tpr"]["ci_low"], supported["tpr"]["ci_high"]) == (-1.0, -1.0)
    assert supported["tpr"]["verdict"] == "worse"
    assert supported["tnr"]["delta"] == 0 and supported["tnr"]["verdict"] == "can't tell"
    assert block["metrics"], "the runs' metrics are compared too"
    for m in block["metrics"].values():
        assert m["n"] == 8

    swapped = json.loads(
        cli_run("agreement", path, "--runs", "--json", "--base", second, "--candidate", first[:-2])
    )["paired"]
    assert swapped["labels"]["supported"]["tpr"]["delta"] == 1.0
    assert swapped["labels"]["supported"]["tpr"]["verdict"] == "better"
    text = cli_run("agreement", path, "--runs")
    assert "paired: candidate" in text and "worse" in text
    out = cli_run("agreement", path, "--base", first, code=2)
    assert "--runs" in out
