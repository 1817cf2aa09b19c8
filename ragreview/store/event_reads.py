"""The label history read back: ``iter_events`` gives the ``events`` rows (``log``, and
what an undo or redo did) as ``Event``s. Apart from ``store.history``, which writes
them: a ``label`` / ``mark`` call reads no event, and built this dataclass at every
start (issue 27)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.labels import Value
from .records import loads

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils


@dataclass(frozen=True)
class Event:
    """One row of the append-only label history: a change to one label, by whom, when."""

    id: int
    record: str  # record id
    dataset: str
    kind: str
    name: str
    target: str
    old: Value
    new: Value
    reviewer: str
    at: str
    reason: str | None
    session: str | None
    pass_: str | None
    rule: str | None = None  # the guideline rule the change applies (docs/align.md)

    def as_json(self) -> dict[str, Any]:
        """``log --json``'s line: ``kind`` (set, revert, undo, redo, status, note) and
        ``pass`` ("blind" for a change made while the judge's labels were hidden, else
        null) tell the events apart."""
        return {
            "record": self.record,
            "kind": self.kind,
            "pass": self.pass_,
            "name": self.name,
            "target": self.target,
            "old": self.old,
            "new": self.new,
            "reviewer": self.reviewer,
            "at": self.at,
            "reason": self.reason,
            "rule": self.rule,
        }


def iter_events(
    db: sqlite_utils.Database, *, record: int | None = None, event_id: int | None = None
) -> Iterator[Event]:
    sql = (
        "SELECT e.id, r.id, r.dataset, e.kind, e.name, e.target, e.old, e.new, e.reviewer, "
        "e.at, e.reason, e.session, e.pass, e.rule FROM events e "
        "JOIN records r ON r.rowid = e.record"
    )
    params: list[Any] = []
    if record is not None:
        sql += " WHERE e.record = ?"
        params.append(record)
    elif event_id is not None:
        sql += " WHERE e.id = ?"
        params.append(event_id)
    for row in db.conn.execute(sql + " ORDER BY e.id", params):
        (
            eid,
            rid,
            dataset,
            kind,
            name,
            target,
            old,
            new,
            reviewer,
            at,
            reason,
            session,
            pass_,
            rule,
        ) = row
        yield Event(
            eid,
            rid,
            dataset,
            kind,
            name,
            target,
            loads(old),
            loads(new),
            reviewer,
            at,
            reason,
            session,
            pass_,
            rule,
        )
