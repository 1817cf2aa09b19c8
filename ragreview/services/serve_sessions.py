"""The app processes of ``ragreview serve``: they end with the server that started
them, even after ``kill -9`` of it, and the leases of those that could not let go are
released when a server starts again.

A session process learns its server's pid from ``SERVER_PID_ENV``. On Linux it asks
the kernel for SIGTERM when its parent dies (``prctl(PR_SET_PDEATHSIG)``); everywhere
a thread watches ``getppid()``, which changes when the parent is gone (the orphan is
adopted by init or a subreaper). Either way the session releases its lease on a
connection of its own and exits at once: the server, its only reader, is gone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..store import leases, open_database

if TYPE_CHECKING:  # sqlite_utils imports click
    import sqlite_utils

SERVER_PID_ENV = "RAGREVIEW_SERVE_PID"
PR_SET_PDEATHSIG = 1  # linux/prctl.h
WATCH_EVERY_S = 0.25


def process_alive(pid: int) -> bool:
    """A ragreview process of that pid runs (not a zombie, not a reused pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, IndexError):
        return True  # no /proc (macOS): the signal said it exists
    return state not in ("Z", "X") and b"ragreview" in command


def release_dead_leases(db: sqlite_utils.Database) -> int:
    """Free the leases of sessions whose process is gone (killed with an earlier server)."""
    return leases.release_dead(db, process_alive)


def release_lease(db_path: str, session: str) -> None:
    db = open_database(db_path)
    try:
        leases.release(db, session)
    finally:
        db.conn.close()


def _parent_death_signal(signum: int) -> None:
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return
    libc = ctypes.CDLL(libc_name, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)


def end_with_server(server_pid: int | None, cleanup: Callable[[], None]) -> None:
    """Run ``cleanup`` and exit as soon as the server (``server_pid``, else the parent
    now) is gone, or on SIGTERM. Call from the main thread before the app runs."""
    ending = threading.Lock()

    def end() -> None:
        if not ending.acquire(blocking=False):
            return
        try:
            cleanup()
        except Exception:  # nothing is left to tell, and exiting matters more
            pass
        finally:
            os._exit(0)

    def on_signal(signum: int, frame: object) -> None:
        # not here: the main thread may be inside a write transaction on the app's
        # connection; a thread waits for it (busy timeout) while the handler returns
        threading.Thread(target=end, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    if sys.platform.startswith("linux"):
        _parent_death_signal(signal.SIGTERM)
    parent = server_pid if server_pid is not None else os.getppid()

    def watch() -> None:
        while os.getppid() == parent:  # checked first: the server may already be gone
            time.sleep(WATCH_EVERY_S)
        end()

    threading.Thread(target=watch, daemon=True, name="ragreview-server-watch").start()
