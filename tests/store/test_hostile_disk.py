"""A hostile disk: a damaged or foreign DB file, a read-only mount, a full disk.

Each is one line and exit 1 from every command, never a traceback; read-only commands
work on a read-only mount; a full disk loses no label that was acknowledged.

Tests run as root here, where ``chmod`` stops neither reads nor writes, so the
read-only and full-disk cases mount a small tmpfs (skipped where mounting is not
allowed); the full disk is also reproduced without a mount by ``PRAGMA max_page_count``.
"""

from __future__ import annotations

import gc
import json
import shutil
import sqlite3
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragreview.cli import cli
from ragreview.store import event_reads, history, open_database
from ragreview.store import records as store_records
from ragreview.store.db import DatabaseProblem, explain

DAMAGED = "is not a ragreview database or is damaged: run sqlite3"


def invoke(*args: object) -> tuple[int, str]:
    """Run the CLI in-process; an uncaught exception (a traceback) fails the test."""
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stderr


def labelled_db(tmp_path: Path, demo_path: Path) -> Path:
    src = tmp_path / "demo.jsonl"
    shutil.copy(demo_path, src)
    code, err = invoke("label", src, "covid-1", "relevant", "0a", "false", "--reviewer", "ann")
    assert code == 0, err
    db = tmp_path / "demo.ragreview.db"
    # the in-process command's connection is only closed when collected: close it, and
    # fold the WAL into the file, so that nothing writes the file after it is damaged
    gc.collect()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db


def damage(db: Path, kind: str) -> None:
    if kind == "garbage":
        db.write_bytes(b"this is no database at all\n" * 100)
    elif kind == "pages":  # header intact, the pages after the schema overwritten
        with db.open("r+b") as fh:
            fh.seek(16384 * 2)
            fh.write(b"\xa5" * 16384 * 8)
    elif kind == "truncated":
        db.write_bytes(db.read_bytes()[:20000])
    elif kind == "foreign":  # a real SQLite file of another program
        db.unlink()
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE invoices (n INTEGER)")
        conn.commit()
        conn.close()


COMMANDS = [
    ("log", "{db}"),
    ("log", "{src}"),  # PATH the input: its DB beside it is the damaged one
    ("metrics", "{db}"),
    ("metrics", "{db}", "--per-record"),
    ("export", "{db}", "--out", "{tmp}/out.jsonl"),
    ("agreement", "{db}"),
    ("conflicts", "{db}"),
    ("sample", "{db}", "--n", "2"),
    ("label", "{db}", "covid-1", "relevant", "0b", "true"),
    ("mark", "{db}", "covid-1", "--reviewed"),
    ("undo", "{db}"),
    ("redo", "{db}"),
    ("settings", "{db}"),
    ("judge", "{db}", "--model", "m", "--dry-run"),
    ("import", "{src}", "--db", "{db}"),
    ("merge", "{db}", "{db}", "--into", "{tmp}/merged.db"),
    ("open", "{db}"),
]


@pytest.mark.parametrize("kind", ["garbage", "pages", "truncated", "foreign"])
def test_a_damaged_database_is_one_line_from_every_command(kind, tmp_path, demo_path):
    db = labelled_db(tmp_path, demo_path)
    damage(db, kind)
    before = db.read_bytes()
    fill = {"db": str(db), "src": str(tmp_path / "demo.jsonl"), "tmp": str(tmp_path)}
    for command in COMMANDS:
        args = [a.format(**fill) for a in command]
        code, err = invoke(*args)
        assert code == 1, (args, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and DAMAGED in lines[0], (args, err)
        assert lines[0].startswith(f"Error: {db} ") or f"Error: {db}:" in lines[0], (args, err)
    assert db.read_bytes() == before  # nothing tried to "repair" it
    assert not (tmp_path / "out.jsonl").exists()


def test_storage_errors_name_what_happened():
    def err(name: str, text: str) -> sqlite3.OperationalError:
        e = sqlite3.OperationalError(text)
        e.sqlite_errorname = name  # type: ignore[attr-defined]
        return e

    assert "disk is full" in str(explain(err("SQLITE_FULL", "database or disk is full"), "x.db"))
    assert "read-only" in str(explain(err("SQLITE_READONLY", "readonly database"), "x.db"))
    assert DAMAGED in str(explain(sqlite3.DatabaseError("file is not a database"), "x.db"))
    assert str(explain(err("SQLITE_BUSY", "database is locked"), "x.db")) == (
        "x.db: database is locked"
    )


def test_read_only_open_cannot_write(tmp_path, demo_path):
    db_path = labelled_db(tmp_path, demo_path)
    db = open_database(db_path, read_only=True)
    try:
        assert store_records.find(db, "covid-1").human == {"relevant": {"0a": False}}
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            history.set_label(
                db, store_records.find(db, "covid-1").rowid, "relevant", "0b", True, "x"
            )
    finally:
        db.conn.close()
    with pytest.raises(DatabaseProblem, match="no such database"):
        open_database(tmp_path / "missing.db", read_only=True)
    assert not (tmp_path / "missing.db").exists()


def test_read_only_commands_leave_no_wal_or_shm_beside_the_db(tmp_path, demo_path, run_cli):
    # (a mode=ro reader created both and, unable to remove them, left them after every
    # command; agreement also keeps its connection from being collected at exit)
    db_path = labelled_db(tmp_path, demo_path)
    for args in (
        ("metrics", db_path),
        ("metrics", db_path, "--per-record", "--json"),
        ("agreement", db_path, "--json"),
        ("agreement", db_path, "--html", tmp_path / "report.html"),
        ("log", db_path),
        ("conflicts", db_path),
        ("runs", db_path),
        ("export", db_path, "--as", "csv", "--out", tmp_path / "out.csv"),
    ):
        done = run_cli(*args)
        assert done.returncode == 0, (args, done.stderr)
        beside = sorted(p.name for p in tmp_path.glob(db_path.name + "-*"))
        assert beside == [], (args, beside)


# -- a real small filesystem ---------------------------------------------------------


@contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", f"rr-{uuid.uuid4().hex[:6]}", str(where)],
        capture_output=True,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_read_only_commands_work_on_a_read_only_mount(tmp_path, demo_path):
    db_path = labelled_db(tmp_path, demo_path)
    with tmpfs(tmp_path / "ro", "8m") as mnt:
        shutil.copy(db_path, mnt / "demo.ragreview.db")
        shutil.copy(tmp_path / "demo.jsonl", mnt / "demo.jsonl")
        remount = subprocess.run(["mount", "-o", "remount,ro", str(mnt)], capture_output=True)
        if remount.returncode != 0:
            pytest.skip("cannot remount read-only")
        ro_db = mnt / "demo.ragreview.db"
        before = ro_db.read_bytes()
        for args in (
            ("log", ro_db),
            ("log", mnt / "demo.jsonl"),
            ("metrics", ro_db),
            ("metrics", ro_db, "--per-record"),
            ("export", ro_db, "--out", tmp_path / "out.jsonl"),
            ("agreement", ro_db),
            ("conflicts", ro_db),
        ):
            code, err = invoke(*args)
            assert code == 0, (args, err)
        assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 5
        code, err = invoke("label", ro_db, "covid-1", "relevant", "0b", "true")
        assert code == 1 and len(err.strip().splitlines()) == 1, err
        assert "read-only" in err and "nothing was changed" in err
        assert ro_db.read_bytes() == before


def test_a_full_disk_during_label_loses_no_acknowledged_label(tmp_path, demo_path, run_cli):
    with tmpfs(tmp_path / "small", "3m") as mnt:
        src = mnt / "demo.jsonl"
        shutil.copy(demo_path, src)
        acknowledged = []
        for key in ("0a", "0b"):
            proc = run_cli("label", src, "covid-1", "relevant", key, "false", "--reviewer", "ann")
            assert proc.returncode == 0, proc.stderr
            acknowledged.append(key)
        # unbuffered: a buffered file would flush its unwritten rest on close and raise there
        with (mnt / "filler").open("wb", buffering=0) as fh:  # take every byte left
            try:
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
            except OSError:
                pass
        for args in (
            ("label", src, "covid-1", "relevant", "0c", "true", "--reviewer", "ann"),
            ("mark", src, "covid-1", "--reviewed", "--reviewer", "ann"),
        ):
            proc = run_cli(*args)
            assert proc.returncode == 1, proc.stderr
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and "the disk is full" in lines[0], proc.stderr
            assert "Traceback" not in proc.stderr
        # an export onto the full disk: one line, and no half file or temporary left
        proc = run_cli("export", src, "--out", mnt / "gold.jsonl")
        assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "No space left on device" in proc.stderr or "disk is full" in proc.stderr
        assert [p.name for p in mnt.iterdir() if "gold" in p.name] == []
        (mnt / "filler").unlink()
        log = run_cli("log", src, "--json")
        assert [json.loads(x)["target"] for x in log.stdout.splitlines()] == acknowledged
        conn = sqlite3.connect(mnt / "demo.ragreview.db")
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.close()


def test_a_full_database_loses_no_acknowledged_label(tmp_path, demo_path):
    """The same without a mount: ``max_page_count`` makes SQLite report SQLITE_FULL."""
    db_path = labelled_db(tmp_path, demo_path)
    db = open_database(db_path)
    rowid = store_records.find(db, "covid-1").rowid
    (pages,) = db.conn.execute("PRAGMA page_count").fetchone()
    db.conn.execute(f"PRAGMA max_page_count={pages + 1}")
    acknowledged = []
    with pytest.raises(sqlite3.OperationalError) as raised:
        for i in range(10_000):
            history.set_label(db, rowid, "relevant", "0a", i % 2 == 0, "ann", reason="x" * 2000)
            acknowledged.append(i % 2 == 0)
    assert "the disk is full" in str(explain(raised.value, db_path))
    db.conn.close()
    assert acknowledged
    db = open_database(db_path)
    try:
        new = [e.new for e in event_reads.iter_events(db) if e.reviewer == "ann"][1:]
        assert new == acknowledged
        assert db.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        db.conn.close()
