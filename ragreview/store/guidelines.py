"""A dataset's guidelines and the rule each human label applies (docs/align.md).

The rule of a human label is the ``rule`` of the event that set it: undo, redo and
merge write events that carry the rule on, so the tag follows the value.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..core.errors import RagreviewError
from ..core.guidelines import parse_rules
from .db import write
from .records import now

if TYPE_CHECKING:
    import sqlite3

    import sqlite_utils


def store(db: sqlite_utils.Database, dataset: str, text: str, source: str | None) -> None:
    with write(db.conn) as conn:
        conn.execute(
            "INSERT INTO guidelines (dataset, text, source, at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (dataset) DO UPDATE SET text = excluded.text, "
            "source = excluded.source, at = excluded.at",
            (dataset, text, source, now()),
        )


def text(db: sqlite_utils.Database, dataset: str) -> str | None:
    row = db.conn.execute("SELECT text FROM guidelines WHERE dataset = ?", (dataset,)).fetchone()
    return None if row is None else row[0]


def rules(db: sqlite_utils.Database, dataset: str) -> dict[str, str]:
    """Rule id -> text ({} without guidelines)."""
    found = text(db, dataset)
    return {} if found is None else parse_rules(found)


def check_rule(conn: sqlite3.Connection, rowid: int, rule: str) -> None:
    """Refuse a rule the record's dataset's guidelines do not define."""
    row = conn.execute(
        "SELECT g.text FROM records r LEFT JOIN guidelines g ON g.dataset = r.dataset "
        "WHERE r.rowid = ?",
        (rowid,),
    ).fetchone()
    if row is None or row[0] is None:
        raise RagreviewError(
            "the dataset has no guidelines: add them with `ragreview guidelines PATH FILE`"
        )
    known = parse_rules(row[0])
    if rule not in known:
        shown = ", ".join(known) or "none"
        raise RagreviewError(f"no rule {rule!r} in the dataset's guidelines (rules: {shown})")


def label_rules(db: sqlite_utils.Database, rowid: int) -> dict[tuple[str, str], str]:
    """(label, target) -> the rule of each of the record's human labels that names one."""
    return {
        (name, target): rule
        for name, target, rule in db.conn.execute(
            "SELECT h.name, h.target, e.rule FROM human_labels h JOIN events e ON e.id = h.event "
            "WHERE h.record = ? AND e.rule IS NOT NULL",
            (rowid,),
        )
    }


def reviewed_rule_labels(
    db: sqlite_utils.Database, dataset: str
) -> Iterator[tuple[int, str, str, str | None, str]]:
    """``(rowid, label, human value, judge value or None, rule)`` of each human label
    of the dataset's reviewed records that names a rule (values as stored JSON)."""
    yield from db.conn.execute(
        "SELECT h.record, h.name, h.value, j.value, e.rule FROM human_labels h "
        "JOIN events e ON e.id = h.event JOIN records r ON r.rowid = h.record "
        "LEFT JOIN judge_labels j ON j.record = h.record AND j.name = h.name "
        "AND j.target = h.target "
        "WHERE r.dataset = ? AND r.status = 'reviewed' AND e.rule IS NOT NULL",
        (dataset,),
    )


def dataset_label_rules(
    db: sqlite_utils.Database, dataset: str
) -> dict[str, dict[str, dict[str, str]]]:
    """Record id -> {label: {target: rule}} of the dataset's human labels that name a
    rule (the export of ragreview's own format writes them as ``labels.rules``)."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for rid, name, target, rule in db.conn.execute(
        "SELECT r.id, h.name, h.target, e.rule FROM human_labels h "
        "JOIN events e ON e.id = h.event JOIN records r ON r.rowid = h.record "
        "WHERE r.dataset = ? AND e.rule IS NOT NULL ORDER BY h.record, h.name, h.target",
        (dataset,),
    ):
        out.setdefault(rid, {}).setdefault(name, {})[target] = rule
    return out


def rule_before(conn: sqlite3.Connection, ref: int) -> str | None:
    """The rule in force on event ``ref``'s item just before it (what an undo of
    ``ref`` returns to): the rule of the item's latest label event before it."""
    row = conn.execute(
        "SELECT p.rule FROM events e JOIN events p ON p.record = e.record AND p.name = e.name "
        "AND p.target = e.target AND p.id < e.id "
        "AND p.kind IN ('set', 'revert', 'undo', 'redo') WHERE e.id = ? ORDER BY p.id DESC "
        "LIMIT 1",
        (ref,),
    ).fetchone()
    return None if row is None else row[0]


def rule_of(conn: sqlite3.Connection, event: int) -> str | None:
    row = conn.execute("SELECT rule FROM events WHERE id = ?", (event,)).fetchone()
    return None if row is None else row[0]


def reasons_and_rules(
    db: sqlite_utils.Database, rowids: list[int]
) -> dict[tuple[int, str, str], tuple[str | None, str | None]]:
    """(record, label, target) -> (reason, rule) of each human label of these records:
    the rule of the event that set the value, and the latest reason given on the item
    (as the disagreement pack's: an undo or redo event carries none of its own)."""
    out: dict[tuple[int, str, str], tuple[str | None, str | None]] = {}
    for i in range(0, len(rowids), 500):
        chunk = rowids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for rec, name, target, rule in db.conn.execute(
            "SELECT h.record, h.name, h.target, e.rule FROM human_labels h "
            f"JOIN events e ON e.id = h.event WHERE h.record IN ({marks})",
            chunk,
        ):
            out[(rec, name, target)] = (None, rule)
        for rec, name, target, reason in db.conn.execute(
            "SELECT record, name, target, reason FROM events WHERE reason IS NOT NULL "
            f"AND reason != '' AND record IN ({marks}) ORDER BY id",
            chunk,
        ):
            if (rec, name, target) in out:
                out[(rec, name, target)] = (reason, out[(rec, name, target)][1])
    return out
