"""Writes of ``ragreview merge`` (the use case is ``services/merging.py``): the merged
DB built in one transaction from the source reviews and, per record, the consensus the
use case decided (``Outcome``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

from . import history, metric_writes, run_layers
from .db import write
from .merge_reads import MERGE_REVIEWER, SourceRecord, SourceReview
from .records import dumps, now


@dataclass(frozen=True)
class Outcome:
    """What the merge writes for one record beyond the sources' own layers."""

    conflicts: tuple[tuple[str, str], ...] = ()  # (label, target) the reviewers disagree on
    # (label, target, value, guideline rule) the reviewers agree on, where it is not the
    # judge's value: one event each, by ``merge``, with ``reason``
    agreed: tuple[tuple[str, str, Any, str | None], ...] = ()
    reason: str = ""
    reviewed_by: str | None = None  # no conflict: the record is reviewed, by these names


def write_merged(
    db: sqlite_utils.Database,
    sources: Sequence[SourceReview],
    keys: Sequence[tuple[str, str]],
    datasets: Sequence[tuple],
    settings: Mapping[tuple[str, str], str],
    outcomes: Mapping[tuple[str, str], Outcome],
) -> None:
    """Write the merged DB: ``datasets`` rows, ``settings``, the first source's
    guidelines, one ``merge_sources`` row per source, the records ``keys`` (from the
    first source holding each) with their judge labels, every source's status and
    labels, and each record's ``outcomes``; then the runs and metric rows."""
    rowids: list[int] = []
    with write(db.conn) as conn:
        conn.executemany(
            "INSERT INTO datasets (name, format, source_path, imported_at, source_document) "
            "VALUES (?, ?, ?, ?, ?)",
            datasets,
        )
        conn.executemany(
            "INSERT INTO settings (dataset, name, value) VALUES (?, ?, ?)",
            [(d, n, v) for (d, n), v in settings.items()],
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
                        (sid, rowid, name, target, dumps(value))
                        for name, targets in mine.human.items()
                        for target, value in targets.items()
                    ],
                )
            _write_outcome(db, conn, rowid, outcomes.get(key, Outcome()))
        for name, *_ in datasets:  # the sources' judge layer becomes this file's runs
            run_layers.adopt(conn, name)
        metric_writes.refresh(db, rowids)


def _first(sources: Sequence[SourceReview], key: tuple[str, str]) -> SourceRecord:
    return next(src.records[key] for src in sources if key in src.records)


def _write_outcome(db: sqlite_utils.Database, conn: Any, rowid: int, outcome: Outcome) -> None:
    conn.executemany(
        "INSERT INTO merge_conflicts VALUES (?, ?, ?)",
        [(rowid, name, target) for name, target in outcome.conflicts],
    )
    for name, target, value, rule in outcome.agreed:
        history.apply_change(
            conn, rowid, name, target, value, MERGE_REVIEWER, kind="set",
            reason=outcome.reason, rule=rule,
        )  # fmt: skip
    if outcome.reviewed_by is not None:
        history.mark(db, rowid, "reviewed", outcome.reviewed_by)
