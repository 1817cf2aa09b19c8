"""A ragas annotation export opens reviewed: each sample's ``is_accepted`` is a human
decision (ragas' ``MetricAnnotation`` samples, docs/formats.md, ragas): accepted = the
human agrees with the judge's verdict, rejected = the human holds the opposite."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ragreview.cli import cli
from ragreview.store import open_database
from ragreview.store import records as store_records

FIXTURE = Path(__file__).parents[2] / "fixtures" / "ragas" / "annotated_data.json"


def run(*args: str) -> str:
    result = CliRunner(env={"USER": "tester"}).invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def sample(verdict: int, accepted: bool | None) -> dict:
    """A hand-made aspect-critic sample in the shape of ragas' annotation export."""
    out: dict = {
        "metric_input": {"user_input": "q?", "response": "an answer"},
        "metric_output": verdict,
        "prompts": {
            "single_turn_aspect_critic_prompt": {
                "prompt_input": {"user_input": "q?", "response": "an answer"},
                "prompt_output": {"reason": "because", "verdict": verdict},
                "edited_output": None,
            }
        },
    }
    if accepted is not None:
        out["is_accepted"] = accepted
    return out


def test_each_decision_is_a_reviewed_record_with_the_humans_verdict(tmp_path: Path) -> None:
    """follows ragas dataset_schema MetricAnnotation: ``is_accepted`` true keeps the
    judge's verdict as the human's, false is the human's rejection of it."""
    path = tmp_path / "annotations.json"
    doc = {"helpfulness": [sample(1, True), sample(1, False), sample(0, True), sample(0, None)]}
    path.write_text(json.dumps(doc))
    run("import", str(path))
    db = open_database(tmp_path / "annotations.ragreview.db")
    try:
        stored = {s.id: s for s in store_records.iterate(db)}
    finally:
        db.conn.close()
    assert {i: s.status for i, s in stored.items()} == {
        "1": "reviewed", "2": "reviewed", "3": "reviewed", "4": "unreviewed"
    }  # fmt: skip
    assert {i: s.human for i, s in stored.items()} == {
        "1": {"verdict": {"*": True}},  # accepted: agrees with the judge's 1
        "2": {"verdict": {"*": False}},  # rejected: the opposite of the judge's 1
        "3": {"verdict": {"*": False}},  # accepted: agrees with the judge's 0
        "4": {},  # no decision: nothing from a human
    }
    report = json.loads(run("agreement", str(path), "--json"))
    assert report["records"] == 3
    # judge = prediction, human = truth: 1/1 (tp), 1/0 (fp), 0/0 (tn)
    assert report["labels"]["verdict"]["confusion"] == {"tp": 1, "fp": 1, "fn": 0, "tn": 1}
    # the export writes the same decisions back: nothing changed, nothing rewritten
    out = tmp_path / "out.json"
    run("export", str(path), "--out", str(out))
    assert json.loads(out.read_text()) == doc


def test_the_real_export_is_reviewed_straight_after_import(tmp_path: Path) -> None:
    """ragas' own annotated_data.json: 21 samples, every one with a decision."""
    doc = json.loads(FIXTURE.read_text())
    samples = doc["helpfulness"]
    path = tmp_path / "annotated_data.json"
    path.write_text(FIXTURE.read_text())
    run("import", str(path))
    report = json.loads(run("agreement", str(path), "--json"))
    assert report["records"] == len(samples) == 21
    verdicts = [
        (s["prompts"]["single_turn_aspect_critic_prompt"]["prompt_output"]["verdict"] == 1,
         s["is_accepted"])
        for s in samples
    ]  # fmt: skip
    truth = [judge if accepted else not judge for judge, accepted in verdicts]
    confusion = report["labels"]["verdict"]["confusion"]
    pairs = list(zip([j for j, _ in verdicts], truth))
    assert confusion == {
        "tp": pairs.count((True, True)),
        "fp": pairs.count((True, False)),
        "fn": pairs.count((False, True)),
        "tn": pairs.count((False, False)),
    }
    accepted = sum(a for _, a in verdicts)
    assert report["labels"]["verdict"]["accuracy"] == accepted / 21 == 16 / 21
    assert "no reviewed" not in run("agreement", str(path))
