"""Each reviewed record's label targets, kept apart from its data (``record_targets``,
migration m017).

``agreement`` counts label items over every reviewed record and needs of each only
its task and the keys its labels may name (``core.record_targets``). Reading them out
of the record's ``data`` meant parsing all of it, sentences' text included: most of
a record's bytes and about a fifth of the report's time at 10,000 reviewed records.
So a record's targets are written when it is marked reviewed (``history.set_status``)
as a short JSON text, ``[task, {kind: targets}]`` (``stored_form``: a kind's targets
joined by a NUL), and a page of them is read as one JSON text.

A row is never out of step with its record: a trigger deletes it when the record's
``data`` changes, and the writers that change a reviewed record's data store it again
(an item edit, a judge's facts; a changed re-import makes the record stale). A row of
another ``FORM`` is read as missing. ``page`` leaves out a record without a row, and
its reader computes that record's targets from ``data`` as before (``agreement`` opens
the file read-only, so it does not write them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

from ..core.record_targets import FORM, StoredTargets, stored_form
from . import bulk
from .records import loads

if TYPE_CHECKING:
    import sqlite3


def packed(data_text: str) -> str:
    """The stored form of a record's targets, from its canonical data (JSON text)."""
    return orjson.dumps(stored_form(loads(data_text))).decode()


def store(conn: sqlite3.Connection, rowids: list[int]) -> int:
    """Write the targets of those of ``rowids`` that are reviewed and have none of this
    ``FORM``, in the caller's transaction; return how many were written."""
    rows = [
        (rowid, FORM, packed(data))
        for rowid, data in bulk.rows_in(
            conn,
            "SELECT rowid, data FROM records WHERE rowid IN ({ids}) AND status = 'reviewed' "
            "AND NOT EXISTS "
            f"(SELECT 1 FROM record_targets t WHERE t.record = records.rowid AND t.form = {FORM})",
            rowids,
        )
    ]
    conn.executemany(
        "INSERT OR REPLACE INTO record_targets (record, form, targets) VALUES (?, ?, ?)", rows
    )
    return len(rows)


def page(conn: sqlite3.Connection, rowids: list[int]) -> dict[int, StoredTargets]:
    """The stored targets of a page of records (a few hundred), by rowid, read as one
    JSON text that SQLite writes from the rows. Records without a row of this
    ``FORM`` are absent."""
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    (text,) = conn.execute(
        "SELECT '{' || group_concat('\"' || record || '\":' || targets, ',') || '}' "
        f"FROM record_targets WHERE form = ? AND record IN ({marks})",
        [FORM, *rowids],
    ).fetchone()
    if text is None:
        return {}
    return {
        int(rowid): StoredTargets(task, by_kind)
        for rowid, (task, by_kind) in orjson.loads(text).items()
    }
