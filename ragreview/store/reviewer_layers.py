"""Named reviewers' layers that come with an input file (the annotators of an
InspectorRAGet experiment), and who made each override, for writing them back.

They live where ``merge`` keeps each source reviewer's layer: one ``merge_sources``
row per (input file, reviewer), their labels in ``reviewer_labels`` (with the reason
they gave) and a ``reviewer_records`` row marking each record they labelled as
reviewed by them. The consensus human layer is not touched: a review's overrides stay
ordinary label events.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .records import dumps, loads, now

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

Row = tuple[str, str, str, Any, str | None]  # (reviewer, name, target, value, reason)


def _source_ids(conn: sqlite3.Connection, path: str, reviewers: Iterable[str]) -> dict[str, int]:
    """Each reviewer's ``merge_sources`` row, created on first sight. Reviewer names are
    unique within a DB (as ``merge`` keeps them), so a file imported again, even from
    another place, reuses its reviewers' rows."""
    ids: dict[str, int] = {}
    for who in reviewers:
        row = conn.execute(
            "SELECT min(id) FROM merge_sources WHERE reviewer = ?", (who,)
        ).fetchone()
        if row[0] is None:
            cur = conn.execute(
                "INSERT INTO merge_sources (path, reviewer, merged_at) VALUES (?, ?, ?)",
                (path, who, now()),
            )
            assert cur.lastrowid is not None
            ids[who] = cur.lastrowid
        else:
            ids[who] = row[0]
    return ids


def replace(conn: sqlite3.Connection, path: str, layers: Mapping[int, Iterable[Row]]) -> None:
    """Store each record's reviewer labels read from ``path``, replacing what an earlier
    import of the file stored for it (its reviewers', and any other reviewer's from the
    same file). Runs inside the import's transaction."""
    path = str(Path(path).resolve())
    rows = {rowid: list(given) for rowid, given in layers.items()}
    ids = _source_ids(conn, path, dict.fromkeys(r[0] for given in rows.values() for r in given))
    same_file = [
        sid for (sid,) in conn.execute("SELECT id FROM merge_sources WHERE path = ?", (path,))
    ]
    mine = sorted(set(ids.values()) | set(same_file))
    marks = ",".join("?" * len(mine))
    at = now()
    for rowid, given in rows.items():
        for table in ("reviewer_labels", "reviewer_records"):
            conn.execute(
                f"DELETE FROM {table} WHERE record = ? AND source IN ({marks})", (rowid, *mine)
            )
        conn.executemany(
            "INSERT INTO reviewer_records (source, record, status, reviewed_by, reviewed_at) "
            "VALUES (?, ?, 'reviewed', ?, ?)",
            [(ids[who], rowid, who, at) for who in dict.fromkeys(r[0] for r in given)],
        )
        conn.executemany(
            "INSERT OR REPLACE INTO reviewer_labels (source, record, name, target, value, reason) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(ids[who], rowid, n, t, dumps(v), reason) for who, n, t, v, reason in given],
        )


def layers(
    db: sqlite_utils.Database, dataset: str
) -> list[tuple[int, str, dict[str, dict[str, Any]]]]:
    """Per record of ``dataset`` (file order): (rowid, canonical data JSON,
    {reviewer: {label name: value}}) for its record-level reviewer labels."""
    out: dict[int, tuple[int, str, dict[str, dict[str, Any]]]] = {}
    for rowid, data in db.conn.execute(
        "SELECT rowid, data FROM records WHERE dataset = ? ORDER BY position, rowid", (dataset,)
    ):
        out[rowid] = (rowid, data, {})
    for rowid, who, name, value in db.conn.execute(
        "SELECT l.record, s.reviewer, l.name, l.value FROM reviewer_labels l "
        "JOIN merge_sources s ON s.id = l.source JOIN records r ON r.rowid = l.record "
        "WHERE r.dataset = ? AND l.target = '*' ORDER BY s.id",
        (dataset,),
    ):
        out[rowid][2].setdefault(who, {})[name] = loads(value)
    return list(out.values())


def authors(
    db: sqlite_utils.Database, dataset: str
) -> dict[str, dict[str, tuple[str, str | None]]]:
    """{record id: {label name: (reviewer, reason)}} of the record-level overrides in
    force: who set each one last, and the reason they gave."""
    out: dict[str, dict[str, tuple[str, str | None]]] = {}
    for rid, name, who, reason in db.conn.execute(
        "SELECT r.id, h.name, h.reviewer, e.reason FROM human_labels h "
        "JOIN records r ON r.rowid = h.record JOIN events e ON e.id = h.event "
        "WHERE r.dataset = ? AND h.target = '*'",
        (dataset,),
    ):
        out.setdefault(rid, {})[name] = (who, reason)
    return out


def label_reasons(db: sqlite_utils.Database, dataset: str) -> dict[str, dict[tuple[str, str], str]]:
    """{record id: {(label, target): reason}} of the overrides in force that carry a
    reason (the latest reason given since the value was set)."""
    out: dict[str, dict[tuple[str, str], str]] = {}
    for rid, name, target, reason in db.conn.execute(
        "SELECT r.id, h.name, h.target, (SELECT e.reason FROM events e WHERE e.record = h.record "
        "AND e.name = h.name AND e.target = h.target AND e.id >= h.event "
        "AND e.reason IS NOT NULL ORDER BY e.id DESC LIMIT 1) FROM human_labels h "
        "JOIN records r ON r.rowid = h.record WHERE r.dataset = ?",
        (dataset,),
    ):
        if reason:
            out.setdefault(rid, {})[(name, target)] = reason
    return out


def annotator_report(
    db: sqlite_utils.Database, dataset: str, rubric_free: Collection[str] = ()
) -> dict[str, Any] | None:
    """The annotators block of the agreement report (``core.annotator_agreement``) for a
    dataset whose records declare human metrics; None when none does. ``rubric_free``:
    the formats whose readers build each record from the fields they know, so that no
    record of theirs has a ``rubric`` (``formats.catalogue.without_rubric``); a dataset
    of another format has every record read."""
    from ..core.annotator_agreement import report

    row = db.conn.execute("SELECT format FROM datasets WHERE name = ?", (dataset,)).fetchone()
    if row is not None and row[0] in rubric_free:
        return None  # no record can declare one: skip reading every record's data
    per_record = []
    for _rowid, data, given in layers(db, dataset):
        obj = loads(data)
        rubric = obj.get("rubric")
        if isinstance(rubric, dict) and rubric:
            per_record.append((rubric, given, obj.get("scores") or {}))
    return report(per_record) if per_record else None


def reviewer_vs_annotators(db: sqlite_utils.Database, dataset: str) -> dict[str, Any] | None:
    """The reviewer's own values of the file's human metrics against its annotators'
    (``core.annotator_agreement.reviewer_report``), over records marked reviewed; None
    when no reviewed record has a value of the reviewer's."""
    from ..core.annotator_agreement import reviewer_report

    own: dict[int, dict[str, Any]] = {}
    for rowid, name, value in db.conn.execute(
        "SELECT h.record, h.name, h.value FROM human_labels h JOIN records r ON "
        "r.rowid = h.record WHERE r.dataset = ? AND r.status = 'reviewed' AND h.target = '*'",
        (dataset,),
    ):
        own.setdefault(rowid, {})[name] = loads(value)
    if not own:
        return None
    per_record = []
    for rowid, data, given in layers(db, dataset):
        if rowid in own:
            rubric = loads(data).get("rubric")
            if isinstance(rubric, dict) and rubric:
                per_record.append((rubric, given, own[rowid]))
    found = reviewer_report(per_record) if per_record else {}
    return found or None


def of_record(db: sqlite_utils.Database, rowid: int) -> list[tuple[str, str, Any, str | None]]:
    """(reviewer, label name, value, reason) of the record's record-level reviewer
    labels, in the order the reviewers were first seen."""
    return [
        (who, name, loads(value), reason)
        for who, name, value, reason in db.conn.execute(
            "SELECT s.reviewer, l.name, l.value, l.reason FROM reviewer_labels l "
            "JOIN merge_sources s ON s.id = l.source WHERE l.record = ? AND l.target = '*' "
            "ORDER BY s.id, l.name",
            (rowid,),
        )
    ]


def record_level_overrides(db: sqlite_utils.Database, dataset: str) -> dict[int, dict[str, Any]]:
    """{rowid: {label name: value}} of the dataset's record-level human labels."""
    out: dict[int, dict[str, Any]] = {}
    for rowid, name, value in db.conn.execute(
        "SELECT h.record, h.name, h.value FROM human_labels h "
        "JOIN records r ON r.rowid = h.record WHERE r.dataset = ? AND h.target = '*'",
        (dataset,),
    ):
        out.setdefault(rowid, {})[name] = loads(value)
    return out
