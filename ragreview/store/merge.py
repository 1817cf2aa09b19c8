"""Merging several reviewers' files of one dataset (``ragreview merge``).

The merged DB holds the records and judge labels once, every source reviewer's human
layer and review status (``reviewer_labels``, ``reviewer_records``), and a consensus
human layer: where everyone who reviewed a record agrees, their value (as one event
by ``merge``); where they disagree, nothing, and a ``merge_conflicts`` row for an
adjudicator, whose choice is an ordinary label event.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

from ..core.agreement_report import reviewer_agreement
from ..core.errors import RagreviewError
from ..core.label_items import hashable
from ..core.labels import CATALOGUE, effective, value_of
from ..core.record import parse_record
from . import compact, history, metric_rows, run_layers
from .db import connect_read_only, damaged_message, explain, is_storage_error, write
from .merge_checks import (
    check_datasets,
    check_distinct,
    kept_settings,
    review_digest,
    setting_differences,
)
from .records import loads, now

MERGE_REVIEWER = "merge"


@dataclass
class _Record:
    dataset: str
    id: str
    position: int
    task: str | None
    data: str
    source: str | None
    content_hash: str
    status: str
    reviewed_by: str | None
    reviewed_at: str | None
    judge: list[tuple[str, str, str, str | None]]  # name, target, value JSON, run
    human: dict[str, dict[str, Any]] = field(default_factory=dict)
    rules: dict[tuple[str, str], str] = field(default_factory=dict)  # (name, target) -> rule


@dataclass
class _Source:
    path: str
    reviewer: str
    datasets: list[tuple]
    settings: dict[tuple[str, str], str]
    records: dict[tuple[str, str], _Record]
    reviews: str = ""  # merge_checks.review_digest: a copy's is the same
    guidelines: list[tuple] = field(default_factory=list)  # (dataset, text, source, at)

    @property
    def names(self) -> set[str]:
        return {row[0] for row in self.datasets}


@dataclass
class MergeSummary:
    reviewers: list[tuple[str, str, int]]  # (path, reviewer, records reviewed)
    records: int
    conflicts: int
    datasets: list[str]
    warnings: list[str]


def _read(path: str) -> _Source:
    if not Path(path).is_file():
        raise RagreviewError(f"{path}: no such database")
    try:
        return _read_source(path)
    except sqlite3.DatabaseError as err:  # a damaged page anywhere in the file
        if not is_storage_error(err):
            raise
        raise explain(err, path) from None


def _read_source(path: str) -> _Source:
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
        records: dict[tuple[str, str], _Record] = {}
        by_rowid: dict[int, _Record] = {}
        # files from before m013_compact_records store every source whole
        record_columns = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
        refs_column = "source_refs" if "source_refs" in record_columns else "NULL"
        for row in conn.execute(
            "SELECT rowid, dataset, id, position, task, data, source, content_hash, status, "
            f"reviewed_by, reviewed_at, {refs_column} FROM records"
        ):
            rowid, dataset, rid, position, task, data, source, digest, status, by, at, refs = row
            if refs is not None and source is not None:  # the merged DB stores it whole
                source = compact.rebuild(source, refs, data)
            rec = _Record(dataset, rid, position, task, data, source, digest, status, by, at, [])
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
    return _Source(path, reviewer or Path(path).stem, datasets, settings, records, reviews, found)


def _check(sources: list[_Source]) -> list[str]:
    """Refuse files that are not reviews of the same judged records; list soft issues."""
    check_datasets(sources)
    warnings = setting_differences(sources)
    first: dict[tuple[str, str], tuple[_Source, _Record]] = {}
    for src in sources:
        for key, rec in src.records.items():
            if key not in first:
                first[key] = (src, rec)
                continue
            other_src, other = first[key]
            where = f"record {key[1]!r} of dataset {key[0]!r}"
            if other.content_hash != rec.content_hash:
                raise RagreviewError(
                    f"{src.path} and {other_src.path} hold different content for {where}: "
                    "merge reviews of the same imported file"
                )
            if sorted(other.judge) != sorted(rec.judge):
                raise RagreviewError(
                    f"{src.path} and {other_src.path} hold different judge labels for {where}"
                )
    seen: Counter[str] = Counter(s.reviewer for s in sources)
    for src in sources:  # one name per source, so κ/α rows and conflicts are unambiguous
        if seen[src.reviewer] > 1:
            src.reviewer = f"{src.reviewer} ({Path(src.path).name})"
    return warnings


def merge(db: sqlite_utils.Database, paths: Sequence[str]) -> MergeSummary:
    """Merge the review files ``paths`` into ``db`` (which must not hold their datasets)."""
    if len(paths) < 2:
        raise RagreviewError("merge needs at least two review files")
    sources = [_read(p) for p in paths]
    check_distinct(paths, sources)
    warnings = _check(sources)
    dataset_rows = {row[0]: row for src in reversed(sources) for row in src.datasets}
    existing = {name for (name,) in db.conn.execute("SELECT name FROM datasets")}
    clash = sorted(existing & dataset_rows.keys())
    if clash:
        raise RagreviewError(
            f"the target already holds dataset {clash[0]!r}: merge into a new file"
        )
    keys = sorted(
        {k for src in sources for k in src.records},
        key=lambda k: (k[0], _first(sources, k).position),
    )
    conflicts = 0
    rowids: list[int] = []
    with write(db.conn) as conn:
        conn.executemany(
            "INSERT INTO datasets (name, format, source_path, imported_at, source_document) "
            "VALUES (?, ?, ?, ?, ?)",
            dataset_rows.values(),
        )
        conn.executemany(
            "INSERT INTO settings (dataset, name, value) VALUES (?, ?, ?)",
            # each dataset's from the first file that holds it
            [(d, n, v) for (d, n), v in kept_settings(sources).items()],
        )
        conn.executemany(  # the first source's guidelines of each dataset
            "INSERT OR IGNORE INTO guidelines (dataset, text, source, at) VALUES (?, ?, ?, ?)",
            [row for src in sources for row in src.guidelines],
        )
        source_ids = []
        for src in sources:
            cur = conn.execute(
                "INSERT INTO merge_sources (path, reviewer, merged_at) VALUES (?, ?, ?)",
                (str(Path(src.path).resolve()), src.reviewer, now()),
            )
            source_ids.append(cur.lastrowid)
        for key in keys:
            rec = _first(sources, key)
            rowid = conn.execute(
                "INSERT INTO records (dataset, id, position, task, data, source, content_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    rec.dataset,
                    rec.id,
                    rec.position,
                    rec.task,
                    rec.data,
                    rec.source,
                    rec.content_hash,
                ),
            ).lastrowid
            assert rowid is not None
            rowids.append(rowid)
            conn.executemany(
                "INSERT INTO judge_labels (record, name, target, value, run) VALUES (?, ?, ?, ?, ?)",
                [(rowid, *j) for j in rec.judge],
            )
            voters = []
            for src, sid in zip(sources, source_ids):
                mine = src.records.get(key)
                if mine is None:
                    continue
                conn.execute(
                    "INSERT INTO reviewer_records VALUES (?, ?, ?, ?, ?)",
                    (sid, rowid, mine.status, mine.reviewed_by, mine.reviewed_at),
                )
                conn.executemany(
                    "INSERT INTO reviewer_labels (source, record, name, target, value) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [
                        (sid, rowid, name, target, _json(value))
                        for name, targets in mine.human.items()
                        for target, value in targets.items()
                    ],
                )
                if mine.status == "reviewed":
                    voters.append((src.reviewer, mine.human, mine.rules))
            conflicts += _consensus(db, conn, rowid, rec, voters)
        for name in dataset_rows:  # the sources' judge layer becomes this file's runs
            run_layers.adopt(conn, name)
        metric_rows.refresh(db, rowids)
    return MergeSummary(
        [
            (s.path, s.reviewer, sum(r.status == "reviewed" for r in s.records.values()))
            for s in sources
        ],
        len(keys),
        conflicts,
        sorted(dataset_rows),
        warnings,
    )


def _first(sources: list[_Source], key: tuple[str, str]) -> _Record:
    return next(src.records[key] for src in sources if key in src.records)


def _json(value: Any) -> str:
    from .records import dumps

    return dumps(value)


def _consensus(
    db: sqlite_utils.Database,
    conn: sqlite3.Connection,
    rowid: int,
    rec: _Record,
    voters: list[tuple[str, dict[str, dict[str, Any]], dict[tuple[str, str], str]]],
) -> int:
    """Write the agreed labels of one record; return how many items conflict."""
    if not voters:
        return 0
    judge: dict[str, dict[str, Any]] = {}
    for name, target, value, _ in rec.judge:
        judge.setdefault(name, {})[target] = loads(value)
    layers = [(who, effective(judge, human)) for who, human, _ in voters]
    items = {(n, t) for _, layer in layers for n, ts in layer.items() for t in ts}
    names = ", ".join(who for who, _, _ in voters)
    conflicts = 0
    for name, target in sorted(items):
        if name not in CATALOGUE:
            continue
        given = [value_of(layer, name, target) for _, layer in layers]
        distinct = {hashable(v) for v in given if v is not None}
        if len(distinct) > 1:
            conn.execute("INSERT INTO merge_conflicts VALUES (?, ?, ?)", (rowid, name, target))
            conflicts += 1
            continue
        agreed = next(v for v in given if v is not None)
        # the rule the reviewers named, when they named one and the same
        named = {rules[(name, target)] for _, _, rules in voters if (name, target) in rules}
        if agreed != value_of(judge, name, target):
            history.apply_change(
                conn, rowid, name, target, agreed, MERGE_REVIEWER, kind="set",
                reason=f"merged: agreed by {names}",
                rule=named.pop() if len(named) == 1 else None,
            )  # fmt: skip
    if not conflicts:
        history.mark(db, rowid, "reviewed", names)
    return conflicts


# -- reading a merged DB ----------------------------------------------------------------


@dataclass(frozen=True)
class Conflict:
    rowid: int
    record: str  # record id
    name: str
    target: str
    values: dict[str, Any]  # reviewer -> the value they left in force
    current: Any  # the merged DB's effective value now
    adjudicated: bool  # a reviewer other than ``merge`` has set it since


def reviewers(db: sqlite_utils.Database) -> list[tuple[int, str]]:
    return db.conn.execute("SELECT id, reviewer FROM merge_sources ORDER BY id").fetchall()


def _layers(db: sqlite_utils.Database, table: str, rowid: int, where: str = "", *args: Any) -> dict:
    layer: dict[str, dict[str, Any]] = {}
    for name, target, value in db.conn.execute(
        f"SELECT name, target, value FROM {table} WHERE record = ? {where}", (rowid, *args)
    ):
        layer.setdefault(name, {})[target] = loads(value)
    return layer


def conflicts(db: sqlite_utils.Database, dataset: str, open_only: bool = False) -> list[Conflict]:
    """Items the reviewers of a merged dataset disagree on, in file order.

    The TUI's conflict filter and adjudication use this: choosing a value is an
    ordinary ``history.set_label``; the item then reads ``adjudicated``.
    """
    sources = reviewers(db)
    out = []
    for rowid, rid, name, target in db.conn.execute(
        "SELECT c.record, r.id, c.name, c.target FROM merge_conflicts c "
        "JOIN records r ON r.rowid = c.record WHERE r.dataset = ? "
        "ORDER BY r.position, r.rowid, c.name, c.target",
        (dataset,),
    ).fetchall():
        judge = _layers(db, "judge_labels", rowid)
        values = {}
        for sid, who in sources:
            status = db.conn.execute(
                "SELECT status FROM reviewer_records WHERE source = ? AND record = ?", (sid, rowid)
            ).fetchone()
            if status is None or status[0] != "reviewed":
                continue
            human = _layers(db, "reviewer_labels", rowid, "AND source = ?", sid)
            values[who] = value_of(effective(judge, human), name, target)
        current = value_of(effective(judge, _layers(db, "human_labels", rowid)), name, target)
        adjudicated = (
            db.conn.execute(
                "SELECT 1 FROM events WHERE record = ? AND name = ? AND target = ? "
                "AND reviewer != ? AND kind IN ('set', 'revert', 'undo', 'redo') LIMIT 1",
                (rowid, name, target, MERGE_REVIEWER),
            ).fetchone()
            is not None
        )
        if open_only and adjudicated:
            continue
        out.append(Conflict(rowid, rid, name, target, values, current, adjudicated))
    return out


def conflict_rowids(db: sqlite_utils.Database, dataset: str, open_only: bool = True) -> list[int]:
    """Records with (unadjudicated) conflicts, in file order: the TUI's filter."""
    seen: dict[int, None] = {}
    for c in conflicts(db, dataset, open_only=open_only):
        seen[c.rowid] = None
    return list(seen)


def human_agreement(db: sqlite_utils.Database, dataset: str) -> dict[str, Any] | None:
    """Reviewer-vs-reviewer agreement of a merged dataset (None if not merged)."""
    sources = reviewers(db)
    if not sources:
        return None
    return reviewer_agreement(reviewer_views(db, dataset), [who for _, who in sources])


def reviewer_views(db: sqlite_utils.Database, dataset: str) -> list[tuple[Any, dict, list]]:
    """Per record of a merged dataset: (record, judge layer, each source reviewer's
    effective layer, or None where that reviewer did not review the record)."""
    sources = reviewers(db)
    per_record = []
    for rowid, data in db.conn.execute(
        "SELECT rowid, data FROM records WHERE dataset = ? ORDER BY position, rowid", (dataset,)
    ).fetchall():
        judge = _layers(db, "judge_labels", rowid)
        layers: list[dict | None] = []
        for sid, _ in sources:
            status = db.conn.execute(
                "SELECT status FROM reviewer_records WHERE source = ? AND record = ?", (sid, rowid)
            ).fetchone()
            if status is None or status[0] != "reviewed":
                layers.append(None)
            else:
                human = _layers(db, "reviewer_labels", rowid, "AND source = ?", sid)
                layers.append(effective(judge, human))
        per_record.append((parse_record(loads(data)), judge, layers))
    return per_record
