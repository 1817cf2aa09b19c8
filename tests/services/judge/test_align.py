"""``ragreview align`` end to end (docs/align.md) against a local server acting as a
judge that learns from examples: it answers the corrected label for a record whose
pattern appears among the prompt's examples, the original label otherwise. On a
hand-made dataset the candidate's κ gain is computed by hand, the paired interval
excludes 0, and no record is ever judged with its own correction in its prompt."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragreview.cli import cli
from ragreview.services.judge.align import EXAMPLES_HEAD

from .helpers import write_jsonl

# 20 records: pattern A (q0-q7) hedges ("not sure"): truly "I don't know", but the
# judge says "no" until shown a corrected A; B (q8-q13) declines outright, judged
# "yes", right; C (q14-q19) answers, judged "no", right.
PATTERN = {i: "A" if i < 8 else "B" if i < 14 else "C" for i in range(20)}
ORIGINAL = {"A": "no", "B": "yes", "C": "no"}
WORDS = {1: "yes", 0: "no", 0.5: "partial"}


def records() -> list[dict]:
    text = {"A": "I am not sure, maybe", "B": "I do not know", "C": "The answer is"}
    return [
        {
            "id": f"q{i}",
            "question": f"Question number {i}?",
            "documents": [{"sentences": [["0a", f"Fact {i}."]]}],
            "response": [["a", f"[pattern {PATTERN[i]}] {text[PATTERN[i]]} {i}."]],
        }
        for i in range(20)
    ]


def split(prompt: str) -> tuple[str, str]:
    """(examples block, the task's own prompt)."""
    if not prompt.startswith(EXAMPLES_HEAD):
        return "", prompt
    head, _, rest = prompt.partition("\n\n---\n\n")
    return head, rest


def learning_judge(prompt: str, asked: int) -> dict:
    examples, own = split(prompt)
    pattern = re.findall(r"\[pattern (\w)\]", own)[-1]
    for shown, corrected in re.findall(
        r"Response: \[pattern (\w)\].*\n(?:  .*\n)*?  The reviewer corrected it to: idk = (\S+)",
        examples,
    ):
        if shown == pattern:
            return {"explanation": "…", "idk": WORDS[json.loads(corrected)]}
    return {"explanation": "…", "idk": ORIGINAL[pattern]}


def record_of(prompt: str) -> int:
    _, own = split(prompt)
    return int(re.findall(r"Question number (\d+)\?", own)[-1])


def leaks(prompts: list[str]) -> list[int]:
    """The records whose own correction (its unique reason) is in their prompt."""
    return [record_of(p) for p in prompts if f"reason-for-q{record_of(p)}:" in split(p)[0]]


@pytest.fixture
def cli_run(tmp_path: Path):
    runner = CliRunner(env={"USER": "tester", "HOME": str(tmp_path)})

    def invoke(*args: str, code: int = 0) -> str:
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result.output

    return invoke


def kappa(tp: int, fp: int, fn: int, tn: int) -> float:
    n = tp + fp + fn + tn
    po = (tp + tn) / n
    pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
    return (po - pe) / (1 - pe)


def test_align_learns_from_other_folds_only_and_the_gain_shows(judge_server, tmp_path, cli_run):
    judge_server.state.answer = learning_judge
    path = str(write_jsonl(tmp_path / "idk.jsonl", records()))
    server = ["--model", "m", "--base-url", judge_server.base_url, "--task", "idk"]
    cli_run("judge", path, *server)
    for i in range(20):
        if PATTERN[i] == "A":
            reason = f"reason-for-q{i}: a hedge that gives no answer is an I don't know"
            cli_run("label", path, f"q{i}", "idk", "*", "1", "--reason", reason)
        cli_run("mark", path, f"q{i}", "--reviewed")
    asked_before = len(judge_server.state.chat_prompts)

    out = cli_run("align", path, *server, "--folds", "5", "--examples", "8")
    assert "20 records judged in 5 folds" in out
    prompts = judge_server.state.chat_prompts[asked_before:]
    assert sorted(map(record_of, prompts)) == list(range(20))
    assert leaks(prompts) == []  # no record saw its own correction
    for p in prompts:  # … but every one saw corrections of other records
        assert "reason-for-q" in split(p)[0]

    runs = [json.loads(line) for line in cli_run("runs", path, "--json").splitlines()]
    base, candidate = runs
    assert base["active"] and candidate["mode"] == "align"
    folds = candidate["params"]["align"]["fold"]
    assert sorted(folds) == sorted(f"q{i}" for i in range(20))
    assert sorted(list(folds.values()).count(f) for f in range(5)) == [4] * 5
    shown = candidate["params"]["align"]["fold_examples"]
    for fold, keys in shown.items():
        assert keys and all(folds[rid] != int(fold) for rid, _, _ in keys)
    from ragreview.store import open_database

    db = open_database(tmp_path / "idk.ragreview.db")
    stored = json.loads(
        db.conn.execute(
            "SELECT prompt FROM judge_runs WHERE id = ?", (candidate["id"],)
        ).fetchone()[0]
    )
    db.conn.close()
    assert set(stored) == {"idk"} | {f"idk fold {f}" for f in range(5)}
    for fold, keys in shown.items():
        for rid, _, _ in keys:
            assert f"reason-for-{rid}:" in stored[f"idk fold {fold}"]

    report = json.loads(cli_run("agreement", path, "--runs", "--json"))
    paired = report["paired"]
    assert (paired["base"], paired["candidate"]) == (base["id"], candidate["id"])
    k = paired["labels"]["idk"]["kappa"]
    # by hand: the base judge misses the 8 A records: tp 6 (B), fn 8 (A), tn 6 (C), fp 0
    # -> p_o 12/20, p_e (6·14 + 14·6)/400 = .42, κ = .18/.58; the candidate is right on
    # all 20 (every fold's examples hold an A from another fold: 8 As, 4 per fold) -> κ 1
    assert k["base"] == pytest.approx(kappa(6, 0, 8, 6)) == pytest.approx(0.18 / 0.58)
    assert k["candidate"] == pytest.approx(1.0)
    assert k["delta"] == pytest.approx(1 - 0.18 / 0.58)
    assert k["ci_low"] > 0 and k["verdict"] == "better"
    assert paired["labels"]["idk"]["tpr"]["delta"] == pytest.approx(8 / 14)


def test_the_leak_check_catches_a_records_own_correction():
    """The check above is not vacuous: a prompt carrying its record's own correction
    is caught."""
    leaky = EXAMPLES_HEAD + "Example 1:\n  Reason: reason-for-q3: …\n\n---\n\nQuestion number 3?"
    clean = EXAMPLES_HEAD + "Example 1:\n  Reason: reason-for-q4: …\n\n---\n\nQuestion number 3?"
    assert leaks([leaky, clean]) == [3]


def test_align_refuses_without_corrections(judge_server, tmp_path, cli_run):
    judge_server.state.answer = learning_judge
    path = str(write_jsonl(tmp_path / "idk.jsonl", records()))
    server = ["--model", "m", "--base-url", judge_server.base_url, "--task", "idk"]
    cli_run("judge", path, *server)
    for i in range(20):
        cli_run("mark", path, f"q{i}", "--reviewed")
    out = cli_run("align", path, *server, code=1)
    assert "no corrections to learn from" in out
