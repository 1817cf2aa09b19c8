"""The label and mark use cases: one human change to a record, durable on return.
``ragreview label``/``mark``, ``Dataset.label``/``mark`` and the TUI (so ``serve``'s
browsers too) all call these; every change is an append-only history event naming its
reviewer (``store.history``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..store import history
from ..store import records as store_records

if TYPE_CHECKING:  # sqlite_utils imports click; the TUI needs no CLI
    import sqlite_utils

    from ..store.records import StoredRecord


def _record(
    db: sqlite_utils.Database, dataset: str, record_id: str, stored: StoredRecord | None
) -> StoredRecord:
    # the caller's copy when it is that record (the review screen holds it: a keystroke
    # reads the record once), else the record looked up by id
    if stored is not None and stored.id == record_id:
        return stored
    return store_records.find(db, record_id, dataset)


def label(
    db: sqlite_utils.Database,
    dataset: str,
    record_id: str,
    name: str,
    target: str,
    value: Any,
    reviewer: str,
    *,
    reason: str | None = None,
    session: str | None = None,
    blind: bool = False,
    stored: StoredRecord | None = None,
    **more: Any,
) -> int | None:
    """Set label ``name`` on ``target`` (``*``: the record) of ``record_id`` to
    ``value`` (None: back to the judge's); the event's id, or None when it already had
    that value. ``blind``: the reviewer did not see the judge's labels (the TUI).
    ``more``: further keywords of ``store.history.set_label``, passed on."""
    record = _record(db, dataset, record_id, stored)
    return history.set_label(
        db,
        record.rowid,
        name,
        target,
        value,
        reviewer,
        reason=reason,
        session=session,
        blind=blind,
        stored=record,
        **more,
    )


def mark(
    db: sqlite_utils.Database,
    dataset: str,
    record_id: str,
    reviewed: bool,
    reviewer: str,
    *,
    session: str | None = None,
) -> str:
    """Mark ``record_id`` reviewed (or unreviewed); the status set."""
    status = "reviewed" if reviewed else "unreviewed"
    rowid = store_records.find(db, record_id, dataset).rowid
    history.mark(db, rowid, status, reviewer, session)
    return status
