"""One way to compute a record's metrics: ``agreement --json`` is built from the same
per-record values that ``metrics --per-record --json`` prints, on every fixture.

Each fixture is imported, a few judge labels are overridden (so judge and reviewed
differ), every record is marked reviewed, and the agreement's per-metric n, means and
RMSE are recomputed from the per-record lines.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragreview.cli import cli
from ragreview.store import history, open_database
from ragreview.store import records as store_records
from tests.formats.helpers import map_args

ROOT = Path(__file__).resolve().parents[2]
SHARED_RGB = ROOT.parent / "shared" / "fixtures" / "rgb"
FIXTURES = sorted(
    p for p in (ROOT / "fixtures").rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")
) + (sorted(SHARED_RGB.glob("*.json")) if SHARED_RGB.is_dir() else [])
OVERRIDDEN = 12  # records per fixture with one label flipped


def _cli(*args: object) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def _flipped(value: object) -> object | None:
    if isinstance(value, bool):
        return not value
    return {"S": "NS", "NS": "S", "IR": "S"}.get(value) if isinstance(value, str) else None


def _review_everything(db_path: Path) -> None:
    db = open_database(db_path)
    for stored in list(store_records.iterate(db)):
        if stored.position <= OVERRIDDEN:
            for name, targets in sorted(stored.judge.items()):
                target, value = sorted(targets.items())[0]
                new = _flipped(value)
                if new is not None:
                    history.set_label(db, stored.rowid, name, target, new, "ann")
                    break
        history.mark(db, stored.rowid, "reviewed", "ann")
    db.conn.close()


@pytest.mark.parametrize("source", FIXTURES, ids=lambda p: p.name)
def test_agreement_uses_the_per_record_metrics(tmp_path, source):
    db_path = tmp_path / "review.ragreview.db"
    _cli("import", source, "--db", db_path, *map_args(source))
    _review_everything(db_path)
    lines = [
        json.loads(line) for line in _cli("metrics", db_path, "--per-record", "--json").splitlines()
    ]
    report = json.loads(_cli("agreement", db_path, "--json", "--resamples", "1"))

    pairs: dict[str, list[tuple[float, float]]] = {}
    for row in lines:
        for name in row["judge"].keys() | row["effective"].keys():
            j, e = row["judge"].get(name), row["effective"].get(name)
            if j is not None and e is not None:
                pairs.setdefault(name, []).append((j, e))
    assert set(report["metrics"]) == set(pairs)
    for name, values in pairs.items():
        block = report["metrics"][name]
        n = len(values)
        assert block["n"] == n, name
        assert block["judge_mean"] == pytest.approx(math.fsum(j for j, _ in values) / n), name
        assert block["effective_mean"] == pytest.approx(math.fsum(e for _, e in values) / n)
        rmse = math.sqrt(math.fsum((j - e) ** 2 for j, e in values) / n)
        assert block["rmse"] == pytest.approx(rmse, abs=1e-12), name


def test_covidqa_18_relevance_counts_the_raw_label_list(tmp_path):
    """The case that used to differ: agreement recomputed covidqa-18's relevance without
    the judge layer (0.667) while the stored rows count RAGBench's raw list (1.0)."""
    source = ROOT / "fixtures" / "handwritten" / "ragbench" / "covidqa_test_rows.jsonl"
    db_path = tmp_path / "rb.ragreview.db"
    _cli("import", source, "--db", db_path, *map_args(source))
    _cli("mark", db_path, "covidqa-18", "--reviewed")
    (row,) = [
        json.loads(line)
        for line in _cli("metrics", db_path, "--per-record", "--json").splitlines()
        if json.loads(line)["id"] == "covidqa-18"
    ]
    report = json.loads(_cli("agreement", db_path, "--json", "--resamples", "1"))
    assert row["judge"]["trace.relevance"] == 1.0
    assert report["metrics"]["trace.relevance"]["judge_mean"] == 1.0
