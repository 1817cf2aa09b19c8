"""A reviewer's edits of a record's facts and statements: add, delete, edit, split.

The judge's decomposition of a response into atomic facts (FActScore/SAFE) or
statements (ragas) is itself a judgement a reviewer may correct. Each edit is one
event of kind ``items`` (name ``_facts``, ``_statements`` or
``_reference_statements``; ``old``/``new`` hold the whole list before and after), and
the record's canonical ``data`` is updated in the same transaction, so the metrics
(whose denominators are the record's own items) are recomputed from the edited list.
Undo and redo step through these events like label changes (see ``history``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..core.errors import RagreviewError, RecordError
from ..core.keys import fact_key, reference_statement_key, statement_key
from ..core.record import parse_record
from . import metric_writes, target_rows
from .db import write
from .events import append_event
from .records import dumps

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite3

    import sqlite_utils

# item kind -> (record field, event name, new-key maker)
FIELDS = {
    "fact": ("facts", "_facts", fact_key),
    "statement": ("statements", "_statements", statement_key),
    "reference_statement": (
        "reference_statements",
        "_reference_statements",
        reference_statement_key,
    ),
}
EVENT_NAMES = {name: field for field, name, _ in FIELDS.values()}


def _data(conn: sqlite3.Connection, rowid: int) -> dict[str, Any]:
    row = conn.execute("SELECT data FROM records WHERE rowid = ?", (rowid,)).fetchone()
    if row is None:
        raise RagreviewError(f"no record with rowid {rowid}")
    return json.loads(row[0])


def store_list(conn: sqlite3.Connection, rowid: int, field: str, items: list | None) -> None:
    """Write one item list into the record's data, checked as a canonical record."""
    data = _data(conn, rowid)
    if items:
        data[field] = items
    else:
        data.pop(field, None)
    try:
        parse_record(data)
    except RecordError as err:
        raise RagreviewError(f"not a valid edit: {err}") from None
    conn.execute("UPDATE records SET data = ? WHERE rowid = ?", (dumps(data), rowid))
    target_rows.store(conn, [rowid])  # (a reviewed record's targets follow its items)


def _new_key(kind: str, items: list) -> str:
    make = FIELDS[kind][2]
    taken = {item[0] for item in items}
    n = len(items)
    while make(n) in taken:
        n += 1
    return make(n)


def _apply(
    db: sqlite_utils.Database,
    rowid: int,
    kind: str,
    change,
    reviewer: str,
    session: str | None,
    reason: str | None = None,
) -> tuple[int, str | None]:
    """Run ``change(items) -> (items, key)`` on the record's list; one event."""
    if kind not in FIELDS:
        raise RagreviewError(f"{kind} items cannot be edited")
    field, name, _ = FIELDS[kind]
    with write(db.conn) as conn:
        old = _data(conn, rowid).get(field) or []
        new, key = change([list(item) for item in old])
        store_list(conn, rowid, field, new)
        event = append_event(
            conn,
            rowid,
            "items",
            name,
            key or "*",
            old,
            new,
            reviewer,
            reason=reason,
            session=session,
        )
        metric_writes.refresh(db, [rowid])
    return event, key


def _index(items: list, key: str) -> int:
    for i, item in enumerate(items):
        if item[0] == key:
            return i
    raise RagreviewError(f"no item {key!r}")


def _text(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        raise RagreviewError("an item needs some text")
    return text


def add(db, rowid: int, kind: str, after: str | None, text: str, reviewer: str, session=None):
    """Insert a new item after ``after`` (at the end when None); its key is new."""

    def change(items: list) -> tuple[list, str]:
        key = _new_key(kind, items)
        at = len(items) if after is None else _index(items, after) + 1
        item: list[Any] = [key, _text(text)]
        if kind == "fact":  # the new fact comes from the same response sentence
            item.append(items[at - 1][2] if after is not None and len(items[at - 1]) > 2 else None)
        items.insert(at, item)
        return items, key

    return _apply(db, rowid, kind, change, reviewer, session)


def delete(db, rowid: int, kind: str, key: str, reviewer: str, session=None):
    def change(items: list) -> tuple[list, str]:
        del items[_index(items, key)]
        return items, key

    return _apply(db, rowid, kind, change, reviewer, session)


def edit(db, rowid: int, kind: str, key: str, text: str, reviewer: str, session=None):
    def change(items: list) -> tuple[list, str]:
        items[_index(items, key)][1] = _text(text)
        return items, key

    return _apply(db, rowid, kind, change, reviewer, session)


def split(db, rowid: int, kind: str, key: str, parts: list[str], reviewer: str, session=None):
    """The item keeps its key (and labels) with the first part; the rest become new
    items right after it."""
    parts = [_text(p) for p in parts if p.strip()]
    if len(parts) < 2:
        raise RagreviewError("split needs at least two parts (mark each cut with |)")

    def change(items: list) -> tuple[list, str]:
        at = _index(items, key)
        items[at][1] = parts[0]
        for offset, part in enumerate(parts[1:], 1):
            item: list[Any] = [_new_key(kind, items), part]
            if kind == "fact":
                item.append(items[at][2] if len(items[at]) > 2 else None)
            items.insert(at + offset, item)
        return items, key

    return _apply(db, rowid, kind, change, reviewer, session)


def edited(db: sqlite_utils.Database, dataset: str) -> list[str]:
    """Ids of the dataset's records whose facts or statements now differ from what was
    imported (a source-format writer cannot hold those edits)."""
    marks = ",".join("?" * len(EVENT_NAMES))
    rows = db.conn.execute(
        "SELECT r.id, r.data, e.name, e.old FROM events e JOIN records r ON r.rowid = e.record "
        f"WHERE r.dataset = ? AND e.kind = 'items' AND e.name IN ({marks}) AND e.id = "
        "(SELECT min(f.id) FROM events f WHERE f.record = e.record AND f.name = e.name "
        "AND f.kind = 'items')",
        (dataset, *EVENT_NAMES),
    )
    out = []
    for rid, data, name, old in rows:
        if (json.loads(data).get(EVENT_NAMES[name]) or []) != (json.loads(old) or []):
            out.append(rid)
    return sorted(set(out))
