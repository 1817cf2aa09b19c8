"""``export --out`` never writes over the review DB, its WAL/SHM or an input file; an
existing file needs --force; the file appears whole or not at all."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from ragreview.core.errors import RagreviewError
from ragreview.services import export
from ragreview.store import open_database
from tests.conftest import in_process


def events(db_path: Path) -> list[tuple]:
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute(
            "SELECT kind, name, target, new, reviewer, reason FROM events"
        ).fetchall()
    finally:
        conn.close()


@pytest.fixture
def labelled(demo_copy: Path) -> tuple[Path, Path]:
    """The demo imported, one label with a reason set; (input, DB). (In process: the
    exports under test run as real processes.)"""
    label = ["label", demo_copy, "covid-1", "relevant", "0a", "false", "--reason", "why"]
    proc = in_process(label, demo_copy.parent, USER="tester")
    assert proc.exit_code == 0, proc.stderr
    return demo_copy, demo_copy.with_name("demo.ragreview.db")


@pytest.mark.cli_smoke
def test_out_on_the_database_is_refused_and_the_database_kept(labelled, ragreview):
    src, db_path = labelled
    before = events(db_path)
    size = db_path.stat().st_size
    result = ragreview("export", src, "--out", db_path)
    assert result.exit_code == 1
    assert "refusing to write over" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert db_path.stat().st_size == size and events(db_path) == before
    # and the next command finds every event, reviewer and reason still there
    log = ragreview("log", src, "--json")
    assert [json.loads(x)["reason"] for x in log.stdout.splitlines()] == ["why"]


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_out_on_the_database_side_files_is_refused(labelled, run_cli, suffix):
    src, db_path = labelled
    side = Path(str(db_path) + suffix)
    proc = run_cli("export", src, "--out", side, "--force")
    assert proc.returncode == 1 and "refusing to write over" in proc.stderr


def test_out_on_the_input_is_refused_even_with_force(labelled, run_cli):
    src, db_path = labelled
    text = src.read_bytes()
    for out in (src, src.parent / "." / src.name):
        proc = run_cli("export", src, "--out", out, "--force")
        assert proc.returncode == 1 and "refusing to write over" in proc.stderr
    proc = run_cli("export", db_path, "--out", src, "--force")  # PATH the DB: the source kept
    assert proc.returncode == 1 and "refusing to write over" in proc.stderr
    assert src.read_bytes() == text
    imported = run_cli("import", src)  # nothing changed: no record is stale
    assert imported.returncode == 0 and "5 unchanged" in imported.stderr


def test_symlinks_and_hard_links_are_seen_through(labelled, run_cli, tmp_path):
    src, db_path = labelled
    (tmp_path / "db-link").symlink_to(db_path)
    (tmp_path / "input-link.jsonl").symlink_to(src)
    os.link(src, tmp_path / "hard.jsonl")
    os.link(db_path, tmp_path / "hard.db.bak")
    for name in ("db-link", "input-link.jsonl", "hard.jsonl", "hard.db.bak"):
        proc = run_cli("export", src, "--out", tmp_path / name, "--force")
        assert proc.returncode == 1 and "refusing to write over" in proc.stderr, name
    assert (tmp_path / "db-link").is_symlink()


def test_an_existing_file_needs_force_and_the_write_is_atomic(labelled, run_cli, tmp_path):
    src, _ = labelled
    out = tmp_path / "gold.jsonl"
    out.write_text("keep me\n")
    proc = run_cli("export", src, "--out", out)
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"Error: {out} already exists: give --force to replace it"
    assert out.read_text() == "keep me\n"
    proc = run_cli("export", src, "--out", out, "--force")
    assert proc.returncode == 0, proc.stderr
    assert len(out.read_text().splitlines()) == 5
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".gold")) == []
    # a fresh name needs no --force; a folder that does not exist is one line
    assert run_cli("export", src, "--out", tmp_path / "new.csv", "--as", "csv").returncode == 0
    proc = run_cli("export", src, "--out", tmp_path / "no" / "such.jsonl")
    assert proc.returncode == 1 and "cannot write" in proc.stderr and "Traceback" not in proc.stderr


def test_export_uses_a_unique_temp_name_and_leaves_nothing_on_failure(labelled, tmp_path):
    _, db_path = labelled
    db = open_database(db_path)
    out = tmp_path / "out.jsonl"
    (tmp_path / "out.jsonl.tmp").write_text("someone else's file\n")  # the old fixed name
    seen: list[set[str]] = []

    def peek() -> None:
        seen.append({p.name for p in tmp_path.iterdir()})
        if len(seen) == 3:
            raise KeyboardInterrupt  # stopped half way

    with pytest.raises(KeyboardInterrupt):
        export.export(db, "demo", out, as_="ragreview", on_record=peek)
    temp = seen[0] - {p.name for p in tmp_path.iterdir()}
    assert len(temp) == 1 and next(iter(temp)).startswith(".out.jsonl.")
    assert not out.exists()  # no half file under the real name, and the temp is gone
    assert (tmp_path / "out.jsonl.tmp").read_text() == "someone else's file\n"
    db.conn.close()


def test_the_tui_export_follows_the_same_rules(labelled):
    """ctrl+e writes <dataset>.reviewed.<ext> with force=True (replacing its own earlier
    export), through the same check: the DB and the input stay protected."""
    src, db_path = labelled
    db = open_database(db_path)
    try:
        for target in (db_path, Path(str(db_path) + "-wal"), src):
            with pytest.raises(RagreviewError, match="refusing to write over"):
                export.export(db, "demo", target, as_="ragreview", force=True)
        out = export.reviewed_path(db_path, "demo", ".jsonl")
        assert export.export(db, "demo", out, as_="ragreview", force=True).count == 5
        assert export.export(db, "demo", out, as_="ragreview", force=True).count == 5
    finally:
        db.conn.close()
