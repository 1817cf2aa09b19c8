"""``judge --repeat 2`` (docs/align.md, Judge vs itself): the same records judged twice
with the same prompt against a local server that answers at random with a known rate;
the judge-vs-itself κ comes out as the rate predicts, within its interval."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragreview.cli import cli

from .helpers import trace_records, write_jsonl

N = 200
RIGHT = 0.8  # the server gives each record's true verdict with this probability


def true_idk(i: int) -> bool:
    return i % 2 == 0  # half the records are "I don't know" answers


def noisy_judge(prompt: str, asked: int) -> dict:
    """Each call (record, n-th time asked) draws from its own seeded generator, so the
    answers do not depend on the order the concurrent requests arrive in."""
    i = int(re.search(r"Question number (\d+)\?", prompt).group(1))
    right = random.Random(f"{i}/{asked}").random() < RIGHT
    says_idk = true_idk(i) if right else not true_idk(i)
    return {"explanation": "…", "idk": "yes" if says_idk else "no"}


def expected_self_kappa(p: float) -> float:
    """Two independent answers, each right with probability p, on balanced truth: they
    agree with p² + (1 − p)², each says yes half the time (p_e = ½)."""
    observed = p * p + (1 - p) * (1 - p)
    return (observed - 0.5) / (1 - 0.5)


@pytest.fixture
def cli_run(tmp_path: Path):
    runner = CliRunner(env={"USER": "tester", "HOME": str(tmp_path)})

    def invoke(*args: str, code: int = 0) -> str:
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result.output

    return invoke


def test_repeat_measures_the_judges_own_agreement(judge_server, tmp_path, cli_run):
    judge_server.state.answer = noisy_judge
    path = str(write_jsonl(tmp_path / "idk.jsonl", trace_records(N)))
    judge = ["judge", path, "--model", "m", "--base-url", judge_server.base_url, "--task", "idk"]
    out = cli_run(*judge, "--repeat", "2")
    assert judge_server.state.chat_count() == 2 * N  # the repeat asked again: no cache
    assert "repeat of" in out and "stays the active judge layer" in out
    runs = [json.loads(line) for line in cli_run("runs", path, "--json").splitlines()]
    first, second = runs
    assert first["active"] and not second["active"]
    assert second["params"]["repeat_of"] == first["id"]
    assert second["params"]["use_cache"] is False
    for i in range(10):  # a reviewer sets the true verdict on ten records
        cli_run("label", path, f"q{i}", "idk", "*", "1" if true_idk(i) else "0")
        cli_run("mark", path, f"q{i}", "--reviewed")

    report = json.loads(cli_run("agreement", path, "--runs", "--json"))
    (block,) = report["self_agreement"]
    assert (block["run"], block["repeat"], block["records"]) == (first["id"], second["id"], N)
    idk = block["labels"]["idk"]
    assert idk["n"] == N
    expected = expected_self_kappa(RIGHT)
    assert expected == pytest.approx(0.36)
    assert idk["ci_low"] <= expected <= idk["ci_high"]
    assert idk["ci_high"] - idk["ci_low"] < 0.4
    by_id = {r["id"]: r for r in report["runs"]}
    assert idk["kappa_vs_human"] == by_id[first["id"]]["labels"]["idk"]["kappa"]
    assert report["paired"] is None  # a repeat is not a candidate judge
    text = cli_run("agreement", path, "--runs")
    assert "judge vs itself" in text and "self κ" in text

    # the main report shows it too, beside its own judge-vs-reviewer κ
    main = json.loads(cli_run("agreement", path, "--json"))
    (same,) = main["self_agreement"]
    assert same["labels"]["idk"]["kappa"] == idk["kappa"]
    assert same["labels"]["idk"]["kappa_vs_human"] == main["labels"]["idk"]["kappa"]
    assert "judge vs itself" in cli_run("agreement", path)

    out = cli_run(*judge, "--repeat", "2", "--only-missing", code=2)
    assert "--repeat" in out
