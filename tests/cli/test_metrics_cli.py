"""``ragreview metrics`` end to end: import, then the JSON of docs/architecture.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import in_process
from tests.core.test_metrics_longform import factscore_facts

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "fixtures"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``ragreview ARGS`` in ``cwd`` with HOME there and CI unset, in process (click's
    CliRunner): exit code, stdout and stderr as a child Python gives them, without its
    start-up per call; an uncaught exception is raised."""
    result = in_process(args, cwd)
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def ok(*args: str, cwd: Path) -> str:
    proc = run(*args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture
def demo(tmp_path):
    path = tmp_path / "demo.jsonl"
    path.write_text((ROOT / "fixtures" / "demo.jsonl").read_text())
    ok("import", str(path), cwd=tmp_path)
    return path


def test_metrics_json_shape(demo, tmp_path):
    (obj,) = lines(ok("metrics", str(demo), "--json", cwd=tmp_path))
    assert set(obj) == {
        "group", "records", "reviewed_records", "judge", "effective", "undefined", "estimate",
    }  # fmt: skip
    assert obj["group"] is None and obj["records"] == 5 and obj["reviewed_records"] == 0
    assert set(obj["undefined"]) == {"judge", "effective"}
    # covid-1: 4/5, covid-2: 2/2, markup-1: 1/2
    assert obj["judge"]["trace.relevance"] == pytest.approx((0.8 + 1.0 + 0.5) / 3)
    assert obj["judge"] == obj["effective"]
    assert obj["judge"]["rgb.accuracy"] == 1.0
    assert not any("._" in name for name in obj["judge"])


def test_label_change_shows_in_effective_only(demo, tmp_path):
    ok("label", str(demo), "covid-1", "relevant", "0c", "true", "--reviewer", "ann", cwd=tmp_path)
    ok("mark", str(demo), "covid-1", "--reviewed", cwd=tmp_path)
    (obj,) = lines(ok("metrics", str(demo), "--json", cwd=tmp_path))
    assert obj["reviewed_records"] == 1
    assert obj["judge"]["trace.relevance"] == pytest.approx((0.8 + 1.0 + 0.5) / 3)
    assert obj["effective"]["trace.relevance"] == pytest.approx((1.0 + 1.0 + 0.5) / 3)
    per = lines(ok("metrics", str(demo), "--per-record", "--json", cwd=tmp_path))
    assert [r["id"] for r in per] == ["covid-1", "covid-2", "markup-1", "bio-1", "rgb-1"]
    assert set(per[0]) == {"id", "dataset", "judge", "effective"}
    assert per[0]["dataset"] == "demo"
    assert per[0]["judge"]["trace.relevance"] == 0.8
    assert per[0]["effective"]["trace.relevance"] == 1.0
    table = ok("metrics", str(demo), cwd=tmp_path)
    assert "trace.relevance" in table and "+0.0667" in table


def test_metrics_by_field(demo, tmp_path):
    groups = lines(ok("metrics", str(demo), "--by", "task", "--json", cwd=tmp_path))
    assert [g["group"] for g in groups] == [
        {"task": "longform"},
        {"task": "rgb-noise"},
        {"task": "trace"},
    ]
    assert [g["records"] for g in groups] == [1, 1, 3]
    assert groups[0]["judge"]["longform.supported"] == 3.0
    bad = run("metrics", str(demo), "--by", "a b", cwd=tmp_path)
    assert bad.returncode == 1 and "cannot group" in bad.stderr and "Traceback" not in bad.stderr


def test_variant_setting_changes_metrics(demo, tmp_path):
    ok("settings", str(demo), "trace.variant=capped20", cwd=tmp_path)
    (obj,) = lines(ok("metrics", str(demo), "--json", cwd=tmp_path))
    assert obj["judge"]["trace.relevance"] == pytest.approx((4 / 20 + 2 / 20 + 1 / 20) / 3)


def _factscore_as_native(src: Path, dst: Path) -> None:
    """Canonical records from FActScore rows, their facts' labels as the judge layer."""
    with dst.open("w") as out:
        for n, line in enumerate(src.read_text().splitlines(), 1):
            row = json.loads(line)
            facts, labels = factscore_facts(row)
            obj = {"id": f"{n}", "task": "longform", "question": row["input"], "facts": facts}
            obj["labels"] = {"judge": {"fact": labels}}
            out.write(json.dumps(obj) + "\n")


@pytest.mark.parametrize(
    "name, f1_100, f1_64", [("ChatGPT", 0.3031, 0.4149), ("InstructGPT", 0.1831, 0.2563)]
)
def test_factscore_f1_through_the_cli(tmp_path, name, f1_100, f1_64):
    src = SHARED / "factscore" / f"factscore_labeled_{name}.jsonl"
    if not src.exists():
        pytest.skip("FActScore fixtures absent")
    path = tmp_path / f"{name}.jsonl"
    _factscore_as_native(src, path)
    ok("import", str(path), cwd=tmp_path)
    (obj,) = lines(ok("metrics", str(path), "--json", cwd=tmp_path))
    assert obj["records"] == 183
    assert round(obj["judge"]["longform.f1_at_k"], 4) == f1_100
    ok("settings", str(path), "longform.k=64", cwd=tmp_path)
    (obj,) = lines(ok("metrics", str(path), "--json", cwd=tmp_path))
    assert round(obj["judge"]["longform.f1_at_k"], 4) == f1_64
    assert round(obj["effective"]["longform.f1_at_k"], 4) == f1_64


def test_metrics_command_does_not_import_textual(demo, tmp_path):
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from ragreview.cli import cli\n"
        f"r = CliRunner().invoke(cli, ['metrics', {str(demo)!r}, '--json'])\n"
        "assert r.exit_code == 0, r.output\n"
        "bad = [m for m in ('textual', 'nltk', 'openai', 'rouge_score') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_core_metrics_import_stays_stdlib():
    code = (
        "import sys, ragreview.core.metrics\n"
        "core = [m for m in ('textual', 'click', 'openai', 'nltk', 'rouge_score') "
        "if m in sys.modules]\n"
        "import ragreview.store.metric_writes\n"  # sqlite-utils itself brings click
        "store = [m for m in ('textual', 'openai', 'nltk', 'rouge_score') if m in sys.modules]\n"
        "print(','.join(core + store))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_stored_scores_disagreement_is_reported(tmp_path):
    path = tmp_path / "stored.jsonl"
    docs = [{"sentences": [["0a", "x"], ["0b", "y"]]}]
    rows = [
        {"id": "a", "task": "trace", "documents": docs, "scores": {"stored.relevance_score": 0.5}},
        {"id": "b", "task": "trace", "documents": docs, "scores": {"stored.relevance_score": 0.5}},
    ]
    rows[0]["labels"] = {"judge": {"relevant": {"0a": True}}}
    rows[1]["labels"] = {"judge": {"relevant": {"0a": True, "0b": True}}}
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ok("import", str(path), cwd=tmp_path)
    out = ok("metrics", str(path), cwd=tmp_path)
    assert "stored scores in the source vs recomputed" in out
    stored_part = out.split("stored scores in the source")[1]
    cells = next(
        [c.strip() for c in row.split("│")[1:-1]]
        for row in stored_part.splitlines()
        if "trace.relevance" in row
    )
    # 2 records compared, 1 disagrees, by 0.5; RMSE sqrt(0.25 / 2)
    assert cells == ["trace.relevance", "2", "1", "0.5000", "0.3536"]
    (obj,) = lines(ok("metrics", str(path), "--json", cwd=tmp_path))
    assert obj["judge"]["trace.relevance_rmse"] == pytest.approx((0.25 / 2) ** 0.5)


def test_rgb_rates_per_noise_rate_in_the_table(tmp_path):
    path = tmp_path / "rgb.jsonl"
    rows = []
    for i, (noise, rejected, matched) in enumerate(
        [(0.2, False, True), (0.2, False, False), (1.0, True, False), (1.0, False, False)]
    ):
        rows.append(
            {
                "id": f"r{i}",
                "task": "rgb-noise",
                "noise_rate": noise,
                "answer_parts": [["Paris"]],
                "labels": {"judge": {"rejected": {"*": rejected}, "part_matched": {"p0": matched}}},
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ok("import", str(path), cwd=tmp_path)
    ok("label", str(path), "r3", "rejected", "*", "true", cwd=tmp_path)
    out = ok("metrics", str(path), cwd=tmp_path)
    table = out.split("RGB by noise rate")[1]
    cells = {
        c[0]: c
        for c in ([x.strip() for x in line.split("│")[1:-1]] for line in table.splitlines())
        if len(c) == 4
    }
    # accuracy, rejection rate (evalue.py); no judge script's verdict in this file, so
    # no reject_evalue.py column
    assert cells["0.2"] == ["0.2", "2", "0.5000", "–"]
    assert cells["1.0"] == ["1.0", "2", "–", "0.5000 → 1.0000"]
    groups = lines(ok("metrics", str(path), "--by", "noise_rate", "--json", cwd=tmp_path))
    assert [g["judge"].get("rgb.rejection_rate") for g in groups] == [None, 0.5]
    assert groups[1]["effective"]["rgb.rejection_rate"] == 1.0


def test_noise_table_ignores_records_of_other_tasks(demo, tmp_path):
    # demo.jsonl has one RGB record (noise 0.4) beside trace and long-form records, which
    # have no noise rate: one noise rate is no table, not a row of dashes for the others
    out = ok("metrics", str(demo), cwd=tmp_path)
    assert "rgb.accuracy" in out
    assert "RGB by noise rate" not in out


def test_per_record_table_streams_lines_past_the_limit(demo, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from ragreview.cli import cli
    from ragreview.cli import metrics as metrics_cmd

    monkeypatch.setattr(metrics_cmd, "TABLE_LIMIT", 2)
    result = CliRunner().invoke(cli, ["metrics", str(demo), "--per-record"])
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in result.output.splitlines()]
    assert rows[0] == ["covid-1", "trace.adherence", "0.0000", "0.0000"]
    assert ["rgb-1", "rgb.correct", "1.0000", "1.0000"] in rows
    assert len({r[0] for r in rows}) == 5
