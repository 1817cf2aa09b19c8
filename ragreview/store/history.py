"""Human label changes as append-only events; the human layer is their fold.

Every change (set, revert to the judge's value, undo, redo, review status, note) is
one event row written in the same short transaction as the ``human_labels`` row it
implies, so what the screen shows as done is on disk.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from ..core.errors import RagreviewError
from ..core.labels import NOT_SHOWN, Value, check_label
from ..core.rgb_rules import refusal
from . import item_edits, metric_writes
from .db import write
from .events import append_event
from .records import StoredRecord, dumps, get, loads, now

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

    from .event_reads import Event

STATUS_LABEL = "_status"
NOTE_LABEL = "_note"
LABEL_KINDS = ("set", "revert", "undo", "redo")


def _current(conn: sqlite3.Connection, rowid: int, name: str, target: str) -> Value:
    row = conn.execute(
        "SELECT value FROM human_labels WHERE record = ? AND name = ? AND target = ?",
        (rowid, name, target),
    ).fetchone()
    return None if row is None else loads(row[0])


def _rule_now(conn: sqlite3.Connection, rowid: int, name: str, target: str) -> str | None:
    row = conn.execute(
        "SELECT e.rule FROM human_labels h JOIN events e ON e.id = h.event "
        "WHERE h.record = ? AND h.name = ? AND h.target = ?",
        (rowid, name, target),
    ).fetchone()
    return None if row is None else row[0]


def apply_change(
    conn: sqlite3.Connection,
    rowid: int,
    name: str,
    target: str,
    new: Value,
    reviewer: str,
    *,
    kind: str,
    reason: str | None = None,
    session: str | None = None,
    pass_: str | None = None,
    ref: int | None = None,
    meant: bool = False,
    rule: str | None = None,
    set_rule: bool = False,
) -> int | None:
    """Append one label event and fold it into ``human_labels``. Caller holds the txn.

    ``new`` None removes the human label (the judge's value shows again). Returns the
    event id, or None when nothing changes, unless the reviewer ``meant`` a change:
    then an event whose old and new are equal records that they set this value too
    (another reviewer set it a moment before, unseen), and the label is theirs.
    ``rule``: the guideline rule the change applies; a different rule on an unchanged
    value is still recorded (``set_rule``: also when ``rule`` is None, as an undo back to
    no rule).
    """
    old = _current(conn, rowid, name, target)
    same_rule = (rule is None and not set_rule) or _rule_now(conn, rowid, name, target) == rule
    if old == new and type(old) is type(new) and same_rule and not meant:
        return None
    at = now()
    event_id = append_event(
        conn,
        rowid,
        kind,
        name,
        target,
        old,
        new,
        reviewer,
        at=at,
        reason=reason,
        session=session,
        pass_=pass_,
        ref=ref,
        rule=rule,
    )
    if new is None:
        conn.execute(
            "DELETE FROM human_labels WHERE record = ? AND name = ? AND target = ?",
            (rowid, name, target),
        )
    else:
        conn.execute(
            "INSERT INTO human_labels (record, name, target, value, reviewer, at, event) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (record, name, target) DO UPDATE SET "
            "value = excluded.value, reviewer = excluded.reviewer, at = excluded.at, "
            "event = excluded.event",
            (rowid, name, target, dumps(new), reviewer, at, event_id),
        )
    return event_id


def set_label(
    db: sqlite_utils.Database,
    rowid: int,
    name: str,
    target: str,
    value: Value,
    reviewer: str,
    *,
    reason: str | None = None,
    session: str | None = None,
    blind: bool = False,
    stored: StoredRecord | None = None,
    seen: Value = NOT_SHOWN,
    rule: str | None = None,
) -> int | None:
    """Override one label (``value`` None reverts it to the judge's). Durable on return.

    ``stored``: the record as the caller just read it (the review screen holds it), so
    a keystroke reads the record once. ``rule``: the id of the dataset's guideline rule
    the correction applies (refused when the guidelines do not define it).

    ``seen``: the value the reviewer's screen showed when they pressed the key (a key
    sends the value it means to set, computed from that, never a toggle of what is
    stored). When it differs from ``value`` the reviewer meant a change, and the event
    is recorded under their name even if another reviewer's write got there first and
    the stored value already equals ``value``: ``log`` then shows both reviewers'
    intent, not only the first one's."""
    if stored is None or stored.rowid != rowid:
        stored = get(db, rowid)
    if value is None:
        resolved = check_label_target(stored.record, name, target)
    else:
        why = refusal(stored.record, name, stored.judge)
        if why is not None:  # e.g. RGB judgements on a data file without predictions
            raise RagreviewError(f"record {stored.record.id!r}: {why}")
        resolved, value = check_label(stored.record, name, target, value)
    with write(db.conn) as conn:
        if rule is not None:
            if value is None:
                raise RagreviewError("a rule tags a reviewer's value: not a revert")
            from . import guidelines  # (its rule parser: only with --rule, issue 27)

            guidelines.check_rule(conn, rowid, rule)
        event = apply_change(
            conn,
            rowid,
            name,
            resolved,
            value,
            reviewer,
            kind="revert" if value is None else "set",
            reason=reason,
            session=session,
            pass_="blind" if blind else None,
            meant=seen is not NOT_SHOWN and not _same(seen, value),
            rule=rule,
        )
        if event is not None:  # the record and judge layer are as just read: not again
            metric_writes.refresh(db, [rowid], known={rowid: (stored.record, stored.judge)})
    return event


def _same(a: Value, b: Value) -> bool:
    return a == b and type(a) is type(b)


def check_label_target(record, name: str, target: str) -> str:
    from ..core.labels import spec
    from ..core.record import resolve_target

    kind = spec(name, record).target
    resolved = resolve_target(record, kind, target)
    if resolved is None:
        raise RagreviewError(f"record {record.id!r} has no {kind} key {target!r}")
    return resolved


def _stacks(
    conn: sqlite3.Connection, reviewer: str, session: str | None, dataset: str | None = None
) -> tuple[list, list]:
    """Undo and redo stacks of a reviewer's label events (of one session, one dataset
    if given: undo in one dataset must not reach into another in the same DB)."""
    sql = (
        "SELECT e.id, e.kind, e.ref FROM events e WHERE e.reviewer = ? AND e.kind IN "
        "('set', 'revert', 'undo', 'redo', 'items')"
    )
    params: list[Any] = [reviewer]
    if session is not None:
        sql += " AND e.session = ?"
        params.append(session)
    if dataset is not None:
        sql += " AND e.record IN (SELECT rowid FROM records WHERE dataset = ?)"
        params.append(dataset)
    undo: list[int] = []
    redo: list[int] = []
    for event_id, kind, ref in conn.execute(sql + " ORDER BY e.id", params):
        if kind in ("set", "revert", "items"):
            undo.append(event_id)
            redo.clear()
        elif kind == "undo" and ref in undo:
            undo.remove(ref)
            redo.append(ref)
        elif kind == "redo" and ref in redo:
            redo.remove(ref)
            undo.append(ref)
    return undo, redo


def _step(
    db: sqlite_utils.Database, reviewer: str, session: str | None, dataset: str | None, kind: str
) -> Event | None:
    with write(db.conn) as conn:
        undo, redo = _stacks(conn, reviewer, session, dataset)
        stack = undo if kind == "undo" else redo
        if not stack:
            return None
        ref = stack[-1]
        rowid, name, target, old, new = conn.execute(
            "SELECT record, name, target, old, new FROM events WHERE id = ?", (ref,)
        ).fetchone()
        value = loads(old if kind == "undo" else new)
        if name in item_edits.EVENT_NAMES:  # a fact/statement list edit: put the list back
            item_edits.store_list(conn, rowid, item_edits.EVENT_NAMES[name], value)
            event_id = None  # recorded below, with the list as both old and new
        else:
            from . import guidelines  # (not at every label call's start, issue 27)

            # the rule follows the value: redo brings back ref's, undo the one before it
            rule = (
                guidelines.rule_of(conn, ref)
                if kind == "redo"
                else guidelines.rule_before(conn, ref)
            )
            event_id = apply_change(
                conn, rowid, name, target, value, reviewer, kind=kind, session=session, ref=ref,
                rule=rule, set_rule=True,
            )  # fmt: skip
        if event_id is None:  # already at that value (someone else changed it): record anyway
            event_id = append_event(
                conn, rowid, kind, name, target, value, value, reviewer, session=session, ref=ref
            )
        metric_writes.refresh(db, [rowid])
        from .event_reads import iter_events  # (not at every label call's start, issue 27)

        return next(iter_events(db, event_id=event_id))


def undo(
    db: sqlite_utils.Database,
    reviewer: str,
    session: str | None = None,
    dataset: str | None = None,
) -> Event | None:
    """Reverse the reviewer's latest label change still in force. None if nothing to undo."""
    return _step(db, reviewer, session, dataset, "undo")


def redo(
    db: sqlite_utils.Database,
    reviewer: str,
    session: str | None = None,
    dataset: str | None = None,
) -> Event | None:
    return _step(db, reviewer, session, dataset, "redo")


def mark(
    db: sqlite_utils.Database, rowid: int, status: str, reviewer: str, session: str | None = None
) -> None:
    """Set a record's review status (reviewed / unreviewed), with an event."""
    if status not in ("reviewed", "unreviewed"):
        raise RagreviewError(f"unknown status {status!r}")
    with write(db.conn) as conn:
        set_status(conn, rowid, status, reviewer, session)


def set_status(
    conn: sqlite3.Connection, rowid: int, status: str, reviewer: str, session: str | None = None
) -> None:
    """``mark`` in the caller's transaction (also an import whose file records the
    review: ``ImportItem.reviewed``)."""
    old = conn.execute("SELECT status FROM records WHERE rowid = ?", (rowid,)).fetchone()[0]
    at = now()
    conn.execute(
        "UPDATE records SET status = ?, reviewed_by = ?, reviewed_at = ? WHERE rowid = ?",
        (
            status,
            reviewer if status == "reviewed" else None,
            at if status == "reviewed" else None,
            rowid,
        ),
    )
    append_event(
        conn, rowid, "status", STATUS_LABEL, "*", old, status, reviewer, at=at, session=session
    )
    if status == "reviewed":  # what `agreement` reads of a reviewed record (m017)
        from . import target_rows

        target_rows.store(conn, [rowid])


def set_note(
    db: sqlite_utils.Database,
    rowid: int,
    text: str | None,
    reviewer: str,
    session: str | None = None,
) -> None:
    with write(db.conn) as conn:
        old = conn.execute("SELECT note FROM records WHERE rowid = ?", (rowid,)).fetchone()[0]
        conn.execute("UPDATE records SET note = ? WHERE rowid = ?", (text, rowid))
        append_event(conn, rowid, "note", NOTE_LABEL, "*", old, text, reviewer, session=session)


def set_reason(
    db: sqlite_utils.Database,
    rowid: int,
    name: str,
    target: str,
    reason: str,
    reviewer: str,
    session: str | None = None,
) -> int:
    """Attach a reason to the human label on (name, target): an event of kind
    ``reason`` that keeps the value (undo skips it; ``ragreview log`` shows it)."""
    with write(db.conn) as conn:
        value = _current(conn, rowid, name, target)
        if value is None:
            raise RagreviewError(f"no label of yours on {name} {target} to give a reason for")
        return append_event(
            conn,
            rowid,
            "reason",
            name,
            target,
            value,
            value,
            reviewer,
            reason=reason,
            session=session,
        )
