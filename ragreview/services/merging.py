"""The merge use case: several reviewers' DBs of the same dataset combined into a new
one, with the per-dataset agreement between the reviewers (``ragreview merge``), and
what a merged dataset holds: its conflicts and each reviewer's layer (``audit``,
``humans_first``). The SQL is in ``store/merge_reads.py`` and ``store/merge_writes.py``.

The merged DB holds the records and judge labels once, every source reviewer's human
layer and review status, and a consensus human layer: where everyone who reviewed a
record agrees, their value (as one event by ``merge``); where they disagree, nothing,
and a conflict for an adjudicator, whose choice is an ordinary label event.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.agreement_report import reviewer_agreement
from ..core.errors import RagreviewError
from ..core.label_items import hashable
from ..core.labels import CATALOGUE, effective, value_of
from ..core.record import parse_record
from ..store import merge_reads, open_database
from ..store.merge_reads import SourceRecord, SourceReview
from ..store.merge_writes import Outcome, write_merged
from ..store.records import loads
from .merge_checks import check_datasets, check_distinct, kept_settings, setting_differences

if TYPE_CHECKING:
    import sqlite_utils


@dataclass
class MergeSummary:
    reviewers: list[tuple[str, str, int]]  # (path, reviewer, records reviewed)
    records: int
    conflicts: int
    datasets: list[str]
    warnings: list[str]


@dataclass
class Merged:
    summary: MergeSummary
    agreement: dict[str, Any]  # dataset -> human_agreement


def merge(paths: Sequence[str | Path], into: str | Path) -> Merged:
    """Merge the review DBs ``paths`` into the new DB ``into`` (never one of them)."""
    if Path(into).resolve() in {Path(p).resolve() for p in paths}:
        raise RagreviewError("--into must be a new file, not one of the inputs")
    created = not Path(into).exists()
    database = open_database(into)
    try:
        summary = merge_into(database, [str(p) for p in paths])
        agreement = {name: human_agreement(database, name) for name in summary.datasets}
    except BaseException:
        database.conn.close()
        if created:  # a refused merge leaves no empty database behind (nothing else had it)
            _remove_new_database(Path(into))
        raise
    database.conn.close()
    return Merged(summary, agreement)


def _remove_new_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def merge_into(db: sqlite_utils.Database, paths: Sequence[str]) -> MergeSummary:
    """Merge the review files ``paths`` into ``db`` (which must not hold their datasets)."""
    if len(paths) < 2:
        raise RagreviewError("merge needs at least two review files")
    sources = [merge_reads.read_review(p) for p in paths]
    check_distinct(paths, sources)
    warnings = _check(sources)
    dataset_rows = {row[0]: row for src in reversed(sources) for row in src.datasets}
    clash = sorted(merge_reads.dataset_names(db) & dataset_rows.keys())
    if clash:
        raise RagreviewError(
            f"the target already holds dataset {clash[0]!r}: merge into a new file"
        )
    keys = sorted(
        {k for src in sources for k in src.records},
        key=lambda k: (k[0], _first(sources, k).position),
    )
    outcomes = {key: _consensus(sources, key) for key in keys}
    # each dataset's settings from the first file that holds it
    write_merged(db, sources, keys, list(dataset_rows.values()), kept_settings(sources), outcomes)
    return MergeSummary(
        [
            (s.path, s.reviewer, sum(r.status == "reviewed" for r in s.records.values()))
            for s in sources
        ],
        len(keys),
        sum(len(o.conflicts) for o in outcomes.values()),
        sorted(dataset_rows),
        warnings,
    )


def _check(sources: list[SourceReview]) -> list[str]:
    """Refuse files that are not reviews of the same judged records; list soft issues."""
    check_datasets(sources)
    warnings = setting_differences(sources)
    first: dict[tuple[str, str], tuple[SourceReview, SourceRecord]] = {}
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


def _first(sources: list[SourceReview], key: tuple[str, str]) -> SourceRecord:
    return next(src.records[key] for src in sources if key in src.records)


def _consensus(sources: list[SourceReview], key: tuple[str, str]) -> Outcome:
    """One record's agreed labels and conflicts among the reviewers who reviewed it."""
    voters = [
        (src.reviewer, mine.human, mine.rules)
        for src in sources
        if (mine := src.records.get(key)) is not None and mine.status == "reviewed"
    ]
    if not voters:
        return Outcome()
    judge: dict[str, dict[str, Any]] = {}
    for name, target, value, _ in _first(sources, key).judge:
        judge.setdefault(name, {})[target] = loads(value)
    layers = [(who, effective(judge, human)) for who, human, _ in voters]
    items = {(n, t) for _, layer in layers for n, ts in layer.items() for t in ts}
    names = ", ".join(who for who, _, _ in voters)
    conflicts, agreed_items = [], []
    for name, target in sorted(items):
        if name not in CATALOGUE:
            continue
        given = [value_of(layer, name, target) for _, layer in layers]
        distinct = {hashable(v) for v in given if v is not None}
        if len(distinct) > 1:
            conflicts.append((name, target))
            continue
        agreed = next(v for v in given if v is not None)
        # the rule the reviewers named, when they named one and the same
        named = {rules[(name, target)] for _, _, rules in voters if (name, target) in rules}
        if agreed != value_of(judge, name, target):
            rule = named.pop() if len(named) == 1 else None
            agreed_items.append((name, target, agreed, rule))
    return Outcome(
        tuple(conflicts),
        tuple(agreed_items),
        reason=f"merged: agreed by {names}",
        reviewed_by=None if conflicts else names,
    )


# -- what a merged dataset holds --------------------------------------------------------


@dataclass(frozen=True)
class Conflict:
    rowid: int
    record: str  # record id
    name: str
    target: str
    values: dict[str, Any]  # reviewer -> the value they left in force
    current: Any  # the merged DB's effective value now
    adjudicated: bool  # a reviewer other than ``merge`` has set it since


def conflicts(db: sqlite_utils.Database, dataset: str, open_only: bool = False) -> list[Conflict]:
    """Items the reviewers of a merged dataset disagree on, in file order.

    The TUI's conflict filter and adjudication use this: choosing a value is an
    ordinary ``history.set_label``; the item then reads ``adjudicated``.
    """
    sources = merge_reads.reviewers(db)
    out = []
    for rowid, rid, name, target in merge_reads.conflict_rows(db, dataset):
        judge = merge_reads.judge_layer(db, rowid)
        values = {}
        for sid, who in sources:
            human = merge_reads.reviewer_layer(db, rowid, sid)
            if human is not None:
                values[who] = value_of(effective(judge, human), name, target)
        current = value_of(effective(judge, merge_reads.human_layer(db, rowid)), name, target)
        adjudicated = merge_reads.adjudicated(db, rowid, name, target)
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
    sources = merge_reads.reviewers(db)
    if not sources:
        return None
    return reviewer_agreement(reviewer_views(db, dataset), [who for _, who in sources])


def reviewer_views(db: sqlite_utils.Database, dataset: str) -> list[tuple[Any, dict, list]]:
    """Per record of a merged dataset: (record, judge layer, each source reviewer's
    effective layer, or None where that reviewer did not review the record)."""
    sources = merge_reads.reviewers(db)
    per_record = []
    for rowid, data in merge_reads.record_data(db, dataset):
        judge = merge_reads.judge_layer(db, rowid)
        layers: list[dict | None] = []
        for sid, _ in sources:
            human = merge_reads.reviewer_layer(db, rowid, sid)
            layers.append(None if human is None else effective(judge, human))
        per_record.append((parse_record(data), judge, layers))
    return per_record
