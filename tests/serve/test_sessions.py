"""Session processes end with their server, even after ``kill -9`` of it, and a server
started again frees the leases of sessions that died without letting go."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from aiohttp import ClientSession

from tests.conftest import subprocess_env
from tests.serve.conftest import children, holders

REVIEWER = {"Cookie": "ragreview_reviewer=Ann"}
APP_START_S = 60  # a session's Python starts slowly on a loaded machine


def _running(pid: int) -> bool:
    """The process exists and is not a zombie waiting for a parent to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


async def _open_session(http: ClientSession, url: str, db: Path):
    """A websocket session, once its app process runs and holds its lease."""
    socket = await http.ws_connect(url + "/ws?width=100&height=30", headers=REVIEWER)
    deadline = time.monotonic() + APP_START_S
    while not holders(db):
        assert time.monotonic() < deadline, "the session took no lease"
        time.sleep(0.1)
    return socket


async def test_session_processes_die_with_a_server_killed_by_sigkill(serve):
    served = serve()
    async with ClientSession() as http:
        await _open_session(http, served.url, served.db)
        sessions = children(served.process.pid)
        assert len(sessions) == 1 and _running(sessions[0])
        os.kill(served.process.pid, signal.SIGKILL)  # the server alone, not its group
        served.process.wait()
        killed = time.monotonic()
        while any(_running(pid) for pid in sessions) and time.monotonic() - killed < 5:
            time.sleep(0.05)
        gone_after = time.monotonic() - killed
        assert not any(_running(pid) for pid in sessions), f"still running after {gone_after} s"
    assert holders(served.db) == {}  # the dying session let go of its lease


async def test_a_restarted_server_releases_the_leases_of_dead_sessions(serve):
    first = serve()
    async with ClientSession() as http:
        await _open_session(http, first.url, first.db)
        assert holders(first.db) == {"covid-1": "Ann"}
        # server and session killed at once: nobody released the lease
        os.killpg(first.process.pid, signal.SIGKILL)
        first.process.wait()
        time.sleep(0.5)
    assert holders(first.db) == {"covid-1": "Ann"}

    again = serve()
    async with ClientSession() as http:
        socket = await _open_session(http, again.url, again.db)
        # covid-1 is not passed by: the dead session's lease went at start
        assert holders(again.db) == {"covid-1": "Ann"}
        await socket.close()
    again.process.terminate()
    again.process.wait(timeout=15)
    assert "released 1 lease(s) of sessions that ended with an earlier server" in (
        again.log.read_text()
    )


def test_without_the_parent_death_signal_the_watch_ends_the_session(tmp_path):
    """The portable path alone (no prctl, as on macOS): the session's thread sees its
    parent gone, runs the cleanup (the lease release) and exits."""
    released = tmp_path / "released"
    child = (
        "import pathlib, sys, time\n"
        "sys.platform = 'darwin'  # take the portable path only: no prctl\n"
        "from ragreview.services.serve_sessions import end_with_server\n"
        f"end_with_server(None, lambda: pathlib.Path({str(released)!r}).write_text('yes'))\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', {child!r}])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    server = subprocess.Popen(
        [sys.executable, "-c", parent],
        stdout=subprocess.PIPE,
        text=True,
        env=subprocess_env(tmp_path),
        start_new_session=True,
    )
    try:
        assert server.stdout is not None
        lines = {server.stdout.readline().strip(), server.stdout.readline().strip()}
        assert "ready" in lines
        (pid,) = (int(line) for line in lines if line.isdigit())
        os.kill(server.pid, signal.SIGKILL)
        server.wait()
        killed = time.monotonic()
        while _running(pid) and time.monotonic() - killed < 5:
            time.sleep(0.05)
        assert not _running(pid)
        assert released.read_text() == "yes"
    finally:
        try:
            os.killpg(server.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
