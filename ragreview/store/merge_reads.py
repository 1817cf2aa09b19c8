"""Reads for ``ragreview merge`` (the use case is ``services/merging.py``): a source
review file read whole, and the tables of a merged DB (its source reviewers, their
layers, the conflicts and whether someone adjudicated them).

A merged DB holds the records and judge labels once, every source reviewer's human
layer and review status (``reviewer_labels``, ``reviewer_records``), and a consensus
human layer: where everyone who reviewed a record agrees, their value (as one event
by ``merge``); where they disagree, nothing, and a ``merge_conflicts`` row for an
adjudicator, whose choice is an ordinary label event.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

from ..core.errors import RagreviewError
from . import compact, source_blob
from .db import connect_read_only, damaged_message, explain, is_storage_error
from .records import loads

MERGE_REVIEWER = "merge"


@dataclass
class SourceRecord:
    """One record of a source review file, with its judge and human layers."""

    dataset: str
    id: str
    position: int
    task: str | None
    data: str
    source: str | bytes | None  # as the records table stores it (store.source_blob)
    content_hash: str
    status: str
    reviewed_by: str | None
    reviewed_at: str | None
    judge: list[tuple[str, str, str, str | None]]  # name, target, value JSON, run
    human: dict[str, dict[str, Any]] = field(default_factory=dict)
    rules: dict[tuple[str, str], str] = field(default_factory=dict)  # (name, target) -> rule


@dataclass
class SourceReview:
    """A source review file, read whole."""

    path: str
    reviewer: str
    datasets: list[tuple]
    settings: dict[tuple[str, str], str]
    records: dict[tuple[str, str], SourceRecord]
    reviews: str = ""  # review_digest: a copy's is the same
    guidelines: list[tuple] = field(default_factory=list)  # (dataset, text, source, at)

    @property
    def names(self) -> set[str]:
        return {row[0] for row in self.datasets}


def read_review(path: str) -> SourceReview:
    """Read a review file whole (read-only), or one clear message naming it."""
    if not Path(path).is_file():
        raise RagreviewError(f"{path}: no such database")
    try:
        return _read_source(path)
    except sqlite3.DatabaseError as err:  # a damaged page anywhere in the file
        if not is_storage_error(err):
            raise
        raise explain(err, path) from None


def _read_source(path: str) -> SourceReview:
    conn = connect_read_only(path)
    try:
        try:
            # files from before m006_formats have no source_document column
            columns = {row[1] for row in conn.execute("PRAGMA table_info(datasets)")}
            document = "source_document" if "source_document" in columns else "NULL"
            datasets = conn.execute(
                f"SELECT name, format, source_path, imported_at, {document} FROM datasets"
            ).fetchall()
        except sqlite3.DatabaseError:
            raise RagreviewError(damaged_message(path)) from None
        settings = {
            (d, n): v for d, n, v in conn.execute("SELECT dataset, name, value FROM settings")
        }
        records: dict[tuple[str, str], SourceRecord] = {}
        by_rowid: dict[int, SourceRecord] = {}
        # files from before m013_compact_records store every source whole
        record_columns = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
        refs_column = "source_refs" if "source_refs" in record_columns else "NULL"
        for row in conn.execute(
            "SELECT rowid, dataset, id, position, task, data, source, content_hash, status, "
            f"reviewed_by, reviewed_at, {refs_column} FROM records"
        ):
            rowid, dataset, rid, position, task, data, source, digest, status, by, at, refs = row
            if refs is not None and source is not None and type(source) is str:
                # (an older import's compacted line: the merged DB stores it as a new
                # import does; a compressed one goes across as it is)
                source = source_blob.pack(compact.rebuild(source, refs, data))
            rec = SourceRecord(
                dataset, rid, position, task, data, source, digest, status, by, at, []
            )
            records[(rec.dataset, rec.id)] = rec
            by_rowid[rowid] = rec
        for rowid, name, target, value, run in conn.execute(
            "SELECT record, name, target, value, run FROM judge_labels"
        ):
            by_rowid[rowid].judge.append((name, target, value, run))
        for rowid, name, target, value in conn.execute(
            "SELECT record, name, target, value FROM human_labels"
        ):
            by_rowid[rowid].human.setdefault(name, {})[target] = loads(value)
        reviews = review_digest(conn, records)
        found: list[tuple] = []
        # files from before m014_guidelines_and_rules have no guidelines and no rules
        if "rule" in {row[1] for row in conn.execute("PRAGMA table_info(events)")}:
            for rowid, name, target, rule in conn.execute(
                "SELECT h.record, h.name, h.target, e.rule FROM human_labels h "
                "JOIN events e ON e.id = h.event WHERE e.rule IS NOT NULL"
            ):
                by_rowid[rowid].rules[(name, target)] = rule
            found = conn.execute("SELECT dataset, text, source, at FROM guidelines").fetchall()
    finally:
        conn.close()
    names = Counter(r.reviewed_by for r in records.values() if r.status == "reviewed")
    reviewer = names.most_common(1)[0][0] if names else Path(path).stem
    return SourceReview(
        path, reviewer or Path(path).stem, datasets, settings, records, reviews, found
    )


def review_digest(conn: sqlite3.Connection, records: Mapping[tuple[str, str], SourceRecord]) -> str:
    """What identifies a review: every record's content, status and human layer, and the
    whole history (who set what, when). Two files with the same digest are one review
    (the same DB, copied): merged, its reviewer would agree with itself."""
    digest = hashlib.sha256()
    for key in sorted(records):
        rec = records[key]
        human = json.dumps(rec.human, sort_keys=True)
        state = (key, rec.content_hash, rec.status, rec.reviewed_by, rec.reviewed_at, human)
        digest.update(repr(state).encode("utf-8", "backslashreplace"))
    for row in conn.execute(
        "SELECT r.dataset, r.id, e.kind, e.name, e.target, e.old, e.new, e.reviewer, e.at "
        "FROM events e JOIN records r ON r.rowid = e.record ORDER BY e.id"
    ):
        digest.update(repr(row).encode("utf-8", "backslashreplace"))
    return digest.hexdigest()


# -- a merged DB ------------------------------------------------------------------------


def dataset_names(db: sqlite_utils.Database) -> set[str]:
    """The datasets a DB holds (a merge target must hold none of its sources')."""
    return {name for (name,) in db.conn.execute("SELECT name FROM datasets")}


def reviewers(db: sqlite_utils.Database) -> list[tuple[int, str]]:
    """(source id, reviewer) of each merged source review, in merge order."""
    return db.conn.execute("SELECT id, reviewer FROM merge_sources ORDER BY id").fetchall()


def _layer(db: sqlite_utils.Database, table: str, rowid: int, where: str = "", *args: Any) -> dict:
    layer: dict[str, dict[str, Any]] = {}
    for name, target, value in db.conn.execute(
        f"SELECT name, target, value FROM {table} WHERE record = ? {where}", (rowid, *args)
    ):
        layer.setdefault(name, {})[target] = loads(value)
    return layer


def judge_layer(db: sqlite_utils.Database, rowid: int) -> dict[str, dict[str, Any]]:
    return _layer(db, "judge_labels", rowid)


def human_layer(db: sqlite_utils.Database, rowid: int) -> dict[str, dict[str, Any]]:
    return _layer(db, "human_labels", rowid)


def reviewer_layer(db: sqlite_utils.Database, rowid: int, source: int) -> dict | None:
    """A source reviewer's human layer of a record, None where they did not mark it
    reviewed."""
    status = db.conn.execute(
        "SELECT status FROM reviewer_records WHERE source = ? AND record = ?", (source, rowid)
    ).fetchone()
    if status is None or status[0] != "reviewed":
        return None
    return _layer(db, "reviewer_labels", rowid, "AND source = ?", source)


def conflict_rows(db: sqlite_utils.Database, dataset: str) -> list[tuple[int, str, str, str]]:
    """(rowid, record id, label, target) of the dataset's conflicts, in file order."""
    return db.conn.execute(
        "SELECT c.record, r.id, c.name, c.target FROM merge_conflicts c "
        "JOIN records r ON r.rowid = c.record WHERE r.dataset = ? "
        "ORDER BY r.position, r.rowid, c.name, c.target",
        (dataset,),
    ).fetchall()


def adjudicated(db: sqlite_utils.Database, rowid: int, name: str, target: str) -> bool:
    """A reviewer other than ``merge`` has changed the item since the merge."""
    return (
        db.conn.execute(
            "SELECT 1 FROM events WHERE record = ? AND name = ? AND target = ? "
            "AND reviewer != ? AND kind IN ('set', 'revert', 'undo', 'redo') LIMIT 1",
            (rowid, name, target, MERGE_REVIEWER),
        ).fetchone()
        is not None
    )


def record_data(db: sqlite_utils.Database, dataset: str) -> list[tuple[int, Any]]:
    """(rowid, canonical record JSON, parsed) of the dataset's records in file order."""
    return [
        (rowid, loads(data))
        for rowid, data in db.conn.execute(
            "SELECT rowid, data FROM records WHERE dataset = ? ORDER BY position, rowid",
            (dataset,),
        ).fetchall()
    ]
