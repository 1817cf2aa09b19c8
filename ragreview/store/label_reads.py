"""Reads of who set a label, when and why: the human layer's authors and reasons, and
each named reviewer's own layer (merged files, annotators of an input file)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import orjson

from . import records
from .records import loads

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils


def latest_reasons(db: sqlite_utils.Database, rowid: int) -> dict[tuple[str, str], str]:
    """The latest non-empty reason the reviewers gave per (label, target) of a record."""
    return {
        (name, target): reason
        for name, target, reason in db.conn.execute(
            "SELECT name, target, reason FROM events WHERE record = ? AND reason IS NOT NULL "
            "AND reason != '' ORDER BY id",
            (rowid,),
        )
    }


def label_authors(db: sqlite_utils.Database, rowid: int) -> dict[tuple[str, str], tuple[str, str]]:
    """(reviewer, at) of each human label in force on a record, per (label, target)."""
    return {
        (name, target): (reviewer, at)
        for name, target, reviewer, at in db.conn.execute(
            "SELECT name, target, reviewer, at FROM human_labels WHERE record = ?", (rowid,)
        )
    }


def reviewer_label_layers(
    db: sqlite_utils.Database, dataset: str
) -> dict[str, dict[int, dict[str, dict[str, Any]]]]:
    """{reviewer: {rowid: {label: {target: value}}}} of every named reviewer's layer of
    the dataset, reviewers in the order their source was added."""
    by_reviewer: dict[str, dict[int, dict[str, dict[str, Any]]]] = {}
    for who, rowid, name, target, value in db.conn.execute(
        "SELECT s.reviewer, l.record, l.name, l.target, l.value FROM reviewer_labels l "
        "JOIN merge_sources s ON s.id = l.source JOIN records r ON r.rowid = l.record "
        "WHERE r.dataset = ? ORDER BY s.id",
        (dataset,),
    ):
        layer = by_reviewer.setdefault(who, {}).setdefault(rowid, {})
        layer.setdefault(name, {})[target] = loads(value)
    return by_reviewer


def page_layers(
    db: sqlite_utils.Database, table: Literal["judge_labels", "human_labels"], rowids: list[int]
) -> dict[int, dict[str, dict[str, Any]]]:
    """``records.judge_layers`` / ``human_layers`` of a page of records (at most a few
    hundred), equal to them with the same order of labels and targets, read as one
    JSON text that SQLite writes from the rows: every row or column Python reads costs
    more than SQLite's writing it (``agreement`` reads about twelve judge labels per
    record). A value is the stored JSON text itself, so the parsed page holds the
    values parsing each gives."""
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    # (rows come in primary-key order, record, name, target: the order _layers reads)
    (text,) = db.conn.execute(
        "SELECT '{' || group_concat(layer, ',') || '}' FROM ("
        "SELECT record, '\"' || record || '\":{' || group_concat(label, ',') || '}' AS layer "
        "FROM (SELECT record, json_quote(name) || ':{' "
        "|| group_concat(json_quote(target) || ':' || value, ',') || '}' AS label "
        f"FROM {table} WHERE record IN ({marks}) GROUP BY record, name) GROUP BY record)",
        rowids,
    ).fetchone()
    if text is None:
        return {rowid: {} for rowid in rowids}
    try:
        layers = orjson.loads(text)
    except orjson.JSONDecodeError:  # NaN, which only the json module reads: row by row,
        # as each value is read (orjson reads an integer beyond 64 bits as a float,
        # the json module exactly, so the whole page cannot go to the json module)
        return (
            records.judge_layers(db, rowids)
            if table == "judge_labels"
            else records.human_layers(db, rowids)
        )
    return {rowid: layers.get(str(rowid)) or {} for rowid in rowids}
