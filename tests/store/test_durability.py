"""Nothing shown as done is lost: SIGKILL mid-labelling, and two writers at once.

These run real processes against a real SQLite file (docs/architecture.md).
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
import traceback

import pytest

from ragreview.core.import_items import ImportItem
from ragreview.core.record import parse_record
from ragreview.store import importer, open_database
from ragreview.store import records as store_records
from tests.conftest import subprocess_env

SENTENCES = 1000

# argv: db path, record id, reviewer, how many labels. Prints "ready", waits for a line
# on stdin, then prints each label's key only after set_label returned.
LABELLER = textwrap.dedent(
    """
    import sys
    from ragreview.store import history, open_database
    from ragreview.store import records as store_records
    db_path, record_id, reviewer, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    db = open_database(db_path)
    rowid = store_records.find(db, record_id).rowid
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(count):
        key = f"0k{i}"
        history.set_label(db, rowid, "relevant", key, True, reviewer)
        print(key, flush=True)
    print("done", flush=True)
    sys.stdin.readline()  # stay alive until told (or killed)
    """
)


def make_db(path, record_ids):
    db = open_database(path)
    items = []
    for position, rid in enumerate(record_ids, start=1):
        sentences = [[f"0k{i}", f"Sentence {i}."] for i in range(SENTENCES)]
        items.append(
            ImportItem(position, parse_record({"id": rid, "documents": [{"sentences": sentences}]}))
        )
    importer.import_records(db, "ds", "ragreview", None, items)
    db.conn.close()


@pytest.fixture
def spawned():
    """Processes started by a test; any still running at teardown (a failed assertion)
    is killed, by its own handle."""
    procs: list[subprocess.Popen] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def start_labeller(spawned, db_path, record_id, reviewer, count, tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-c", LABELLER, str(db_path), record_id, reviewer, str(count)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(tmp_path),
    )
    spawned.append(proc)
    assert proc.stdout is not None and proc.stdin is not None
    line = proc.stdout.readline()
    assert line == "ready\n", proc.stderr.read() if proc.stderr else line
    return proc


def acknowledged(output: str) -> list[str]:
    """Complete lines only: a line cut by the kill was not (fully) shown."""
    lines = output.split("\n")[:-1]
    return [line for line in lines if line.startswith("0k")]


def stored_labels(db, record_id: str) -> tuple[set[str], set[str]]:
    rowid = store_records.find(db, record_id).rowid
    human = {
        t
        for (t,) in db.conn.execute(
            "SELECT target FROM human_labels WHERE record = ? AND name = 'relevant' "
            "AND value = 'true'",
            (rowid,),
        )
    }
    events = {
        t
        for (t,) in db.conn.execute(
            "SELECT target FROM events WHERE record = ? AND kind = 'set' AND new = 'true'",
            (rowid,),
        )
    }
    return human, events


def test_sigkill_at_random_moments_loses_no_acknowledged_label(tmp_path, spawned) -> None:
    rng = random.Random(8)
    db_path = tmp_path / "kill.ragreview.db"
    rounds = [f"round-{n}" for n in range(5)]
    make_db(db_path, rounds)
    shown: dict[str, list[str]] = {}
    for record_id in rounds:
        proc = start_labeller(spawned, db_path, record_id, "ann", SENTENCES, tmp_path)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        time.sleep(rng.uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        out, _err = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        shown[record_id] = acknowledged(out)
    assert sum(len(v) for v in shown.values()) > 20  # the kills did land mid-labelling
    assert any(0 < len(v) < SENTENCES for v in shown.values())

    db = open_database(db_path)
    assert db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    for record_id, keys in shown.items():
        human, events = stored_labels(db, record_id)
        assert set(keys) <= human, record_id
        assert set(keys) <= events, record_id
        # at most the one in flight when killed was committed without being shown
        assert len(human) - len(keys) <= 1
        assert human == events
    db.conn.close()


def test_two_processes_labelling_at_once_lose_nothing(tmp_path, spawned) -> None:
    count = 250
    db_path = tmp_path / "two.ragreview.db"
    make_db(db_path, ["left", "right"])
    procs = [
        start_labeller(spawned, db_path, "left", "ann", count, tmp_path),
        start_labeller(spawned, db_path, "right", "bob", count, tmp_path),
    ]
    for proc in procs:  # both are ready: release them together
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outputs = []
    for proc in procs:
        line_count = 0
        while True:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            if line == "done\n":
                break
            line_count += 1
        outputs.append(line_count)
        proc.stdin.write("exit\n")
        proc.stdin.flush()
    for proc in procs:
        proc.wait(timeout=30)
        assert proc.returncode == 0, proc.stderr.read()
    assert outputs == [count, count]

    db = open_database(db_path)
    for record_id in ("left", "right"):
        human, events = stored_labels(db, record_id)
        assert human == events == {f"0k{i}" for i in range(count)}
    assert db.conn.execute("SELECT count(*) FROM events").fetchone()[0] == 2 * count
    assert db.conn.execute("SELECT count(*) FROM human_labels").fetchone()[0] == 2 * count
    reviewers = dict(db.conn.execute("SELECT reviewer, count(*) FROM events GROUP BY reviewer"))
    assert reviewers == {"ann": count, "bob": count}
    db.conn.close()


def test_connections_creating_the_same_new_database_at_once(tmp_path) -> None:
    """Each must find the schema migrated exactly once; none may fail. Threads with
    their own connections race like processes do (sqlite3 releases the GIL)."""
    for round_no in range(10):
        db_path = tmp_path / f"new-{round_no}.ragreview.db"
        barrier = threading.Barrier(6)
        results: list[object] = []

        def open_it(db_path=db_path, barrier=barrier, results=results) -> None:
            barrier.wait()
            try:
                db = open_database(db_path)
                results.append(db.conn.execute("SELECT count(*) FROM records").fetchone()[0])
                db.conn.close()
            except Exception:  # reported below, with the round
                results.append(traceback.format_exc())

        threads = [threading.Thread(target=open_it) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert results == [0] * 6, (round_no, results)
        db = open_database(db_path)
        applied = [n for (n,) in db.conn.execute("SELECT name FROM _sqlite_migrations")]
        assert applied and len(applied) == len(set(applied))
        db.conn.close()
