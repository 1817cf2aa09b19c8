"""A real ``ragreview serve`` on a free 127.0.0.1 port, stopped (with its app
processes) when the test ends."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragreview.store import open_database
from tests.conftest import subprocess_env

START_TIMEOUT_S = 30


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def holders(db_path: Path) -> dict[str, str]:
    """``{record id: reviewer}`` of the leases held in the DB at ``db_path``."""
    db = open_database(db_path)
    try:
        rows = db.conn.execute(
            "SELECT r.id, l.reviewer FROM leases l JOIN records r ON r.rowid = l.record"
        ).fetchall()
    finally:
        db.conn.close()
    return dict(rows)


def children(pid: int) -> list[int]:
    """Processes ``pid`` started (the app processes, one per browser session)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str
    db: Path
    log: Path

    def get(self, path: str = "/", headers: dict[str, str] | None = None) -> tuple[int, str]:
        request = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()


@pytest.fixture
def serve(tmp_path: Path, demo_copy: Path) -> Iterator:
    started: list[subprocess.Popen[str]] = []

    def start(*args: str, path: Path | None = None, db: Path | None = None) -> Served:
        """Serve ``path`` (the demo copy by default) with ``args``; ``db``: where its
        database is when not the demo's default."""
        port = free_port()
        log = tmp_path / f"serve-{port}.log"
        served = path or demo_copy
        with log.open("w") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "ragreview", "serve", str(served), "--port", str(port)]
                + list(args),
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                cwd=tmp_path,
                env=subprocess_env(tmp_path, USER="tester"),
                start_new_session=True,  # its app processes share its process group
            )
        started.append(process)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail(f"serve did not listen within {START_TIMEOUT_S} s: {log.read_text()}")
        db_path = db or demo_copy.with_name("demo.ragreview.db")
        return Served(process, f"http://127.0.0.1:{port}", db_path, log)

    yield start
    for process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # closes the sessions, which end their apps
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        try:  # app processes left behind would outlive the test
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
