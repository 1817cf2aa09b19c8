"""Leases: the record a reviewer's session has open is theirs until they go idle.

With several reviewers on one database (``ragreview serve``), each session leases the
record it opens; the others see who holds it and their queues (first unreviewed,
``n``) pass it by. A session holds at most one lease. A lease lapses ``LEASE_SECONDS``
after it was last renewed, so a closed browser or a killed process frees its record
without anyone cleaning up. A session id made by ``process_session`` names the process
holding it, so a server starting again frees at once the leases of sessions whose
process is gone (``release_dead``) instead of passing their records by until they
lapse. Leases are not history: nothing here reaches the events.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .db import write

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

LEASE_SECONDS = 300.0  # idle time after which a lease lapses


@dataclass(frozen=True)
class Lease:
    """A reviewer's hold on a record in a served DB, until it expires."""

    record: int
    reviewer: str
    session: str
    expires_at: float


def available(db: sqlite_utils.Database) -> bool:
    """The database has the leases table (one opened without migrating, read-only,
    may predate it)."""
    return (
        db.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'leases'"
        ).fetchone()
        is not None
    )


def _now(now: float | None) -> float:
    return time.time() if now is None else now


def _holder(db: sqlite_utils.Database, rowid: int, session: str, now: float) -> Lease | None:
    row = db.conn.execute(
        "SELECT record, reviewer, session, expires_at FROM leases "
        "WHERE record = ? AND session != ? AND expires_at > ?",
        (rowid, session, now),
    ).fetchone()
    return None if row is None else Lease(*row)


def _take(
    db: sqlite_utils.Database, rowid: int, reviewer: str, session: str, now: float, ttl: float
) -> None:
    db.conn.execute("DELETE FROM leases WHERE session = ? OR expires_at <= ?", (session, now))
    db.conn.execute(
        "INSERT OR REPLACE INTO leases (record, reviewer, session, expires_at) VALUES (?,?,?,?)",
        (rowid, reviewer, session, now + ttl),
    )


def take(
    db: sqlite_utils.Database,
    rowid: int,
    reviewer: str,
    session: str,
    *,
    now: float | None = None,
    ttl: float = LEASE_SECONDS,
) -> Lease | None:
    """Lease ``rowid`` to ``session`` (dropping its previous lease) unless another
    session holds it: then nothing changes and that session's lease is returned."""
    at = _now(now)
    with write(db.conn):
        held = _holder(db, rowid, session, at)
        if held is None:
            _take(db, rowid, reviewer, session, at, ttl)
    return held


def _first_free(db: sqlite_utils.Database, dataset: str, session: str, now: float) -> int | None:
    row = db.conn.execute(
        "SELECT r.rowid FROM records r WHERE r.dataset = ? AND r.status != 'reviewed' "
        "AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.record = r.rowid "
        "AND l.session != ? AND l.expires_at > ?) "
        "ORDER BY r.position, r.rowid LIMIT 1",
        (dataset, session, now),
    ).fetchone()
    return None if row is None else row[0]


def first_unreviewed(
    db: sqlite_utils.Database, dataset: str, session: str, *, now: float | None = None
) -> int | None:
    """The first record in file order neither reviewed nor leased to another session."""
    return _first_free(db, dataset, session, _now(now))


def take_first_unreviewed(
    db: sqlite_utils.Database,
    dataset: str,
    reviewer: str,
    session: str,
    *,
    now: float | None = None,
    ttl: float = LEASE_SECONDS,
) -> int | None:
    """``first_unreviewed``, leased to ``session`` in the same transaction (two
    sessions starting at once get different records). None when there is none."""
    at = _now(now)
    with write(db.conn):
        rowid = _first_free(db, dataset, session, at)
        if rowid is not None:
            _take(db, rowid, reviewer, session, at, ttl)
    return rowid


def renew(
    db: sqlite_utils.Database,
    session: str,
    *,
    now: float | None = None,
    ttl: float = LEASE_SECONDS,
) -> bool:
    """Push the session's lease ``ttl`` seconds ahead; False when it has none (lapsed
    and taken by someone else, or never taken)."""
    with write(db.conn):
        cursor = db.conn.execute(
            "UPDATE leases SET expires_at = ? WHERE session = ?", (_now(now) + ttl, session)
        )
    return cursor.rowcount > 0


def release(db: sqlite_utils.Database, session: str) -> None:
    with write(db.conn):
        db.conn.execute("DELETE FROM leases WHERE session = ?", (session,))


def held_by_others(
    db: sqlite_utils.Database, dataset: str, session: str, *, now: float | None = None
) -> dict[int, str]:
    """``{rowid: reviewer}`` of the dataset's records leased to other sessions."""
    return dict(
        db.conn.execute(
            # CROSS JOIN: from the few leases to their records; a plain JOIN let SQLite
            # walk every record of the dataset (300,000 at each open and watch tick)
            "SELECT l.record, l.reviewer FROM leases l CROSS JOIN records r "
            "ON r.rowid = l.record WHERE r.dataset = ? AND l.session != ? AND l.expires_at > ?",
            (dataset, session, _now(now)),
        ).fetchall()
    )


def process_session(pid: int | None = None) -> str:
    """A session id naming the process that holds its lease: ``<host>/<pid>/<random>``
    (host names hold no ``/``)."""
    return f"{socket.gethostname()}/{os.getpid() if pid is None else pid}/{uuid.uuid4().hex[:8]}"


def _process_of(session: str) -> tuple[str, int] | None:
    parts = session.rsplit("/", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return None  # a session id of another kind (a test's, an older version's)
    return parts[0], int(parts[1])


def release_dead(db: sqlite_utils.Database, alive: Callable[[int], bool]) -> int:
    """Drop the leases of this machine's sessions whose process is not ``alive`` (a
    session killed with its server). Sessions of another machine or of an id without a
    process are left to lapse. How many leases went."""
    host = socket.gethostname()
    sessions = [s for (s,) in db.conn.execute("SELECT DISTINCT session FROM leases")]
    dead = [
        s
        for s in sessions
        if (held := _process_of(s)) is not None and held[0] == host and not alive(held[1])
    ]
    if not dead:
        return 0
    with write(db.conn):
        marks = ",".join("?" * len(dead))
        cursor = db.conn.execute(f"DELETE FROM leases WHERE session IN ({marks})", dead)
    return cursor.rowcount
