"""Appending to the ``events`` table: the one place an event row is written.

The table is append-only (triggers refuse UPDATE and DELETE); the human layer is its
fold (``history``). Label changes, undo/redo, status, notes, reasons and fact or
statement edits all come through here.
"""

from __future__ import annotations

import sqlite3

from ..core.labels import Value
from .records import dumps, now


def append_event(
    conn: sqlite3.Connection,
    rowid: int,
    kind: str,
    name: str,
    target: str,
    old: Value,
    new: Value,
    reviewer: str,
    *,
    at: str | None = None,
    reason: str | None = None,
    session: str | None = None,
    pass_: str | None = None,
    ref: int | None = None,
    rule: str | None = None,
) -> int:
    """The one way an event is written (the table is append-only): values as JSON, None
    as NULL. Returns the event id. Caller holds the transaction."""
    cur = conn.execute(
        "INSERT INTO events (record, kind, name, target, old, new, reviewer, at, reason, session, "
        "pass, ref, rule) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            rowid,
            kind,
            name,
            target,
            None if old is None else dumps(old),
            None if new is None else dumps(new),
            reviewer,
            at or now(),
            reason,
            session,
            pass_,
            ref,
            rule,
        ),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid
