"""``ragreview open`` in a real terminal (tmux): first screen, a durable key, literal text."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from .conftest import DEMO, REPO, make_app, text_of

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def tmux(*args: str) -> str:
    """Run tmux on the test session's own server (``-L`` socket named after it), so
    tests never race with one another's or another user's tmux server shutting down."""
    target = next(args[i + 1] for i, a in enumerate(args) if a in ("-t", "-s"))
    command = ["tmux", "-L", target, *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def wait_for(session: str, needle: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux("capture-pane", "-p", "-t", session)
        if needle in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{needle!r} never appeared; last screen:\n{screen}")


def wait_still(session: str, needle: str, timeout: float = 40.0) -> str:
    """``wait_for``, then until the screen holds still for half a second: the status line
    and the panel it names can arrive in different frames, and a capture can land while
    a frame is half written (under load in CI: "metrics panel: full" above the compact
    panel's one row)."""
    screen = wait_for(session, needle, timeout)
    deadline, still = time.monotonic() + timeout, 0
    while still < 2 and time.monotonic() < deadline:
        time.sleep(0.25)
        again = tmux("capture-pane", "-p", "-t", session)
        still = still + 1 if again == screen and needle in again else 0
        screen = again
    return screen


@pytest.fixture
def session(tmp_path: Path):
    name = f"ragreview-test-{uuid.uuid4().hex[:8]}"
    yield name
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)


def start(session: str, tmp_path: Path, *args: str) -> None:
    env = {
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
        "USER": "tmux-tester",
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    command = f"cd {shlex.quote(str(tmp_path))} && env {exports} " + shlex.join(
        [sys.executable, "-m", "ragreview", "open", *args]
    )
    tmux("new-session", "-d", "-s", session, "-x", "80", "-y", "24", command)


def test_open_in_tmux_r_is_durable_after_kill(tmp_path, session):
    src = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, src)
    start(session, tmp_path, str(src))
    screen = wait_for(session, "0/5 reviewed")
    assert "covid-1" in screen and "Cytokine storm" in screen
    tmux("send-keys", "-t", session, "r")
    wait_for(session, "≠")  # the override is drawn (after it was committed)
    tmux("kill-session", "-t", session)  # no clean shutdown
    conn = sqlite3.connect(tmp_path / "demo.ragreview.db")
    rows = conn.execute(
        "SELECT r.id, h.name, h.target, h.value, h.reviewer FROM human_labels h "
        "JOIN records r ON r.rowid = h.record"
    ).fetchall()
    assert rows == [("covid-1", "relevant", "0a", "false", "tmux-tester")]


def test_quitting_leaves_every_label_in_the_db_file_alone(tmp_path, session):
    """After q the WAL is moved into the file and removed: the .db file copied on its
    own (no -wal beside it) still holds the session's last label."""
    src = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, src)
    start(session, tmp_path, str(src))
    wait_for(session, "0/5 reviewed")
    tmux("send-keys", "-t", session, "r")
    wait_for(session, "≠")
    tmux("send-keys", "-t", session, "q")
    db = tmp_path / "demo.ragreview.db"
    deadline = time.monotonic() + 20
    while db.with_name(db.name + "-wal").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not db.with_name(db.name + "-wal").exists()
    alone = tmp_path / "copy" / db.name
    alone.parent.mkdir()
    shutil.copy(db, alone)
    conn = sqlite3.connect(alone)
    assert conn.execute("SELECT name, target, value FROM human_labels").fetchall() == [
        ("relevant", "0a", "false")
    ]
    conn.close()


def test_open_in_tmux_blind_shows_markup_literally(tmp_path, session):
    markup = json.loads(DEMO.read_text().splitlines()[2])
    assert markup["id"] == "markup-1"
    src = tmp_path / "markup.jsonl"
    src.write_text(json.dumps(markup) + "\n")
    start(session, tmp_path, str(src), "--reviewer", "bob", "--blind")
    screen = wait_for(session, "0/1 reviewed")
    assert "BLIND" in screen  # --blind reached the app
    assert "[bold red]x[/]" in screen
    assert "[link=https://example.com]a link[/link] inside." in screen
    assert "Does [bold red]this[/] render as markup?" in screen
    assert "bob" in screen


async def test_markup_record_is_rendered_literally_in_pilot(demo):
    app = make_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("n", "n")
        await pilot.pause()
        rows = app.screen.sentences.rows
        assert "A document with [bold red]x[/] and" in text_of(rows[0])
        assert "No: [bold red]x[/] is shown as typed." in text_of(rows[2])
