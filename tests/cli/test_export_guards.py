"""The export use case's guards from the command line (services.export.export,
services.output_file): a refused export leaves the DB answering ``metrics`` exactly as
before; ``--force`` replaces an ordinary file; the temporary file goes on every exit
path, and one left by a ``kill -9`` is removed by the next export to that output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragreview.core.errors import RagreviewError
from ragreview.services import export, output_file
from ragreview.store import open_database
from tests.conftest import REPO_ROOT, in_process, subprocess_env

DEMO = REPO_ROOT / "fixtures" / "demo.jsonl"


def temps(folder: Path, name: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{name}."))


@pytest.fixture
def labelled(demo_copy: Path) -> tuple[Path, Path]:
    # set up in process; the exports under test run as real processes
    label = ["label", demo_copy, "covid-1", "relevant", "0a", "false"]
    proc = in_process(label, demo_copy.parent, USER="tester")
    assert proc.exit_code == 0, proc.stderr
    return demo_copy, demo_copy.with_name("demo.ragreview.db")


def metrics(db_path: Path) -> list[str]:
    """What the DB answers ``metrics`` and ``metrics --json`` (in process: the state is
    compared, not the process)."""
    return [
        in_process(["metrics", db_path, *more], db_path.parent).stdout for more in ([], ["--json"])
    ]


def test_db_wal_and_input_are_refused_and_metrics_are_unchanged(labelled, run_cli):
    src, db_path = labelled
    before = metrics(db_path)
    assert before[0] and before[1]
    text = src.read_bytes()
    for out, extra in [
        (db_path, ["--as", "ragreview"]),
        (Path(f"{db_path}-wal"), []),
        (src, []),
    ]:
        for force in ([], ["--force"]):
            proc = run_cli("export", src, "--out", out, *extra, *force)
            assert proc.returncode == 1, (out, proc.stderr)
            assert proc.stderr.splitlines() == [
                f"Error: {out}: refusing to write over {out} (the review database or an "
                "input); choose another output file"
            ]
    assert src.read_bytes() == text
    assert not Path(f"{db_path}-wal").exists()  # (closed DB: never created by an export)
    after = metrics(db_path)
    assert after == before


def test_force_replaces_an_ordinary_file(labelled, run_cli, tmp_path):
    src, _ = labelled
    out = tmp_path / "gold.jsonl"
    out.write_text("old\n")
    assert run_cli("export", src, "--out", out).returncode == 1
    proc = run_cli("export", src, "--out", out, "--force")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == f"wrote 5 records to {out} as ragreview"
    assert len(out.read_text().splitlines()) == 5 and temps(tmp_path, "gold.jsonl") == []


def test_stdout_appended_to_the_input_is_refused(labelled, tmp_path):
    src, _ = labelled
    text = src.read_bytes()
    with src.open("a") as fh:  # `ragreview export demo.jsonl --out - >> demo.jsonl`
        proc = subprocess.run(
            [sys.executable, "-m", "ragreview", "export", str(src), "--out", "-"],
            stdout=fh,
            stderr=subprocess.PIPE,
            text=True,
            env=subprocess_env(tmp_path / "home"),
            timeout=60,
        )
    assert proc.returncode == 1 and "refusing to write over" in proc.stderr
    assert src.read_bytes() == text


def _big(tmp_path: Path, n: int = 4000) -> Path:
    """The demo's records repeated under new ids: an export that takes a while."""
    rows = [json.loads(line) for line in DEMO.read_text().splitlines()]
    path = tmp_path / "big.jsonl"
    with path.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({**rows[i % len(rows)], "id": f"r{i}"}) + "\n")
    return path


def test_a_killed_export_leaves_a_temp_the_next_export_removes(tmp_path, run_cli):
    big = _big(tmp_path)
    assert run_cli("import", big, timeout=300).returncode == 0
    out = tmp_path / "out.jsonl"
    env = subprocess_env(tmp_path / "home")
    args = [sys.executable, "-m", "ragreview", "export", str(big), "--out", str(out)]
    child = subprocess.Popen(args, env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            left = [tmp_path / n for n in temps(tmp_path, "out.jsonl")]
            if left and left[0].stat().st_size > 0:  # mid-write
                break
            time.sleep(0.002)
        assert child.poll() is None, "the export ended before it could be killed"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL
    left = temps(tmp_path, "out.jsonl")
    assert len(left) == 1 and left[0].startswith(f".out.jsonl.{child.pid}.")
    assert not out.exists()
    proc = run_cli("export", big, "--out", out, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert temps(tmp_path, "out.jsonl") == []
    assert len(out.read_text().splitlines()) == 4000


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_only_temps_of_dead_exports_to_that_output_are_removed(tmp_path):
    out = tmp_path / "out.jsonl"
    dead, alive = _dead_pid(), os.getppid()
    names = [
        f".out.jsonl.{dead}.0123abcd.tmp",  # a killed export's: removed
        f".out.jsonl.{alive}.0123abcd.tmp",  # a running export's: kept
        f".other.jsonl.{dead}.0123abcd.tmp",  # another output's: kept
        ".out.jsonl.tmp",  # not a name of ours: kept
    ]
    for name in names:
        (tmp_path / name).write_text("x")
    removed = output_file.remove_stale_temps(out)
    assert [p.name for p in removed] == [names[0]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names[1:])


@pytest.mark.parametrize("as_", ["ragreview", "csv", "parquet"])
def test_an_exception_inside_the_writer_leaves_no_temp(labelled, tmp_path, as_):
    if as_ == "parquet":
        pytest.importorskip("pyarrow")
    _, db_path = labelled
    out = tmp_path / "exports" / f"out.{as_}"
    out.parent.mkdir()
    db = open_database(db_path)
    calls = []

    def fail() -> None:
        calls.append(1)
        if len(calls) == 2:
            raise ValueError("the writer failed")

    try:
        with pytest.raises(ValueError, match="the writer failed"):
            export.export(db, "demo", out, as_=as_, on_record=fail)
        assert list(out.parent.iterdir()) == []  # neither the output nor any temp
        with pytest.raises(RagreviewError, match="refusing to write over"):
            export.export(db, "demo", Path(f"{db_path}-wal"), as_=as_, force=True)
        assert export.export(db, "demo", out, as_=as_).count == 5
        assert [p.name for p in out.parent.iterdir()] == [out.name]
    finally:
        db.conn.close()


def test_the_agreement_report_is_guarded_too(labelled, run_cli, tmp_path):
    src, db_path = labelled
    before = run_cli("metrics", db_path, "--json").stdout
    for out in (db_path, src):
        proc = run_cli("agreement", src, "--html", out)
        assert proc.returncode == 1 and "refusing to write over" in proc.stderr, proc.stderr
        assert len(proc.stderr.splitlines()) == 1
    assert run_cli("metrics", db_path, "--json").stdout == before
    report = tmp_path / "report.html"
    report.write_text("last week's\n")  # a report is rewritten in place, as before
    proc = run_cli("agreement", src, "--html", report)
    assert proc.returncode == 0, proc.stderr
    assert report.read_text().startswith("<!DOCTYPE html>") or "<html" in report.read_text()
    assert temps(tmp_path, "report.html") == []
