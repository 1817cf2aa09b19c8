"""Queries behind the review UI's record list: filtered, ordered rowids and row summaries.

The list is virtual: it holds only the ordered rowids of the records that pass the
filter (a compact ``array``) and fetches the few columns it draws a page at a time.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

from ..core.labels import CATALOGUE
from . import run_layers
from .metric_layers import COUNT, HUMAN
from .records import dumps

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

    from ..core.where import Condition

STATUSES = ("unreviewed", "reviewed", "stale")


@dataclass(frozen=True)
class ListFilter:
    """Which records the record list shows, and in what order."""

    status: str | None = None  # one of STATUSES, or None for all
    disagreement: bool = False  # only records where a human label differs from the judge's
    task: str | None = None
    text: str | None = None  # substring of the record id or its text
    sort: str = "position"  # position | delta
    conflicts: bool = False  # only records with a reviewer conflict (ragreview merge)
    sample: bool = False  # only the records of the dataset's latest drawn sample
    runs_disagree: bool = False  # only records where two judge runs differ on an item
    queue: bool = False  # only the latest review draw (`ragreview queue`), in draw order
    where: tuple[Condition, ...] = ()  # `field=value` terms (core.where), all must hold

    def describe(self) -> str:
        parts = [self.status or "all"]
        if self.disagreement:
            parts.append("disagree")
        if self.conflicts:
            parts.append("conflicts")
        if self.sample:
            parts.append("sample")
        if self.runs_disagree:
            parts.append("runs≈")
        if self.queue:
            parts.append("queue")
        if self.task:
            parts.append(f"task={self.task}")
        parts.extend(c.describe() for c in self.where)
        if self.text:
            parts.append(f"/{self.text}")
        if self.sort == "delta":
            parts.append("by Δ")
        return " ".join(parts)


@dataclass(frozen=True)
class ListRow:
    """What one line of the record list shows."""

    rowid: int
    position: int
    id: str
    status: str
    task: str | None
    disagrees: bool
    has_note: bool
    question: str | None = None  # its first words tell records apart in the list


def _defaults_sql() -> str:
    """A VALUES table of the labels whose absence means a value (relevant/utilized: false),
    so a human ``false`` where the judge said nothing is agreement, not disagreement."""
    rows = [
        f"('{name}', '{dumps(spec.default)}')"
        for name, spec in CATALOGUE.items()
        if spec.default is not None
    ]
    return "VALUES " + ", ".join(rows)


def disagrees_sql() -> str:
    """A record disagrees when one of its human labels differs from the judge's value (or
    from the catalogue default when the judge gave none). Built when asked, not at import,
    so a family registered later (docs/contributing.md) counts too."""
    return (
        "EXISTS (SELECT 1 FROM human_labels h "
        "LEFT JOIN judge_labels j ON j.record = h.record AND j.name = h.name "
        "AND j.target = h.target "
        f"LEFT JOIN ({_defaults_sql()}) d ON d.column1 = h.name "
        "WHERE h.record = r.rowid AND h.value IS NOT coalesce(j.value, d.column2))"
    )


# Largest |effective - judge| over a record's stored metrics (table from the metrics work).
# A record without human labels has no effective rows of its own (metric_layers.HUMAN):
# its effective values are its judge values, so its delta is 0 where it has a value.
DELTA = (
    f"CASE WHEN {HUMAN} THEN "
    "(SELECT max(abs(e.value - j.value)) FROM record_metrics e JOIN record_metrics j "
    "ON j.record = e.record AND j.name = e.name AND j.layer = 'judge' "
    "WHERE e.record = r.rowid AND e.layer = 'effective') "
    "ELSE (SELECT 0.0 FROM record_metrics j WHERE j.record = r.rowid AND j.layer = 'judge' "
    f"AND j.name <> '{COUNT}' AND j.value IS NOT NULL LIMIT 1) END"
)


def _where(dataset: str, flt: ListFilter) -> tuple[str, list[Any]]:
    where = ["r.dataset = ?"]
    params: list[Any] = [dataset]
    if flt.status:
        where.append("r.status = ?")
        params.append(flt.status)
    if flt.task:
        where.append("r.task = ?")
        params.append(flt.task)
    if flt.text:
        where.append("(instr(lower(r.id), lower(?)) > 0 OR instr(lower(r.data), lower(?)) > 0)")
        params += [flt.text, flt.text]
    if flt.where:  # (the `field=value` filter's parser and SQL: not on the first screen)
        from . import record_filter
    for cond in flt.where:
        clause, more = record_filter.condition_sql(cond)
        where.append(clause)
        params += more
    if flt.disagreement:
        where.append(disagrees_sql())
    if flt.conflicts:
        where.append("r.rowid IN (SELECT record FROM merge_conflicts)")
    if flt.runs_disagree:
        where.append(run_layers.runs_disagree_sql())
    if flt.sample:
        where.append(
            "r.rowid IN (SELECT record FROM sample_records WHERE sample = "
            "(SELECT max(id) FROM samples WHERE dataset = ?))"
        )
        params.append(dataset)
    if flt.queue:
        where.append(f"r.rowid IN (SELECT record FROM review_draw_records WHERE draw = {_DRAW})")
        params.append(dataset)
    return " AND ".join(where), params


_DRAW = "(SELECT max(id) FROM review_draws WHERE dataset = ?)"  # the latest review draw


def latest_sample(db: sqlite_utils.Database, dataset: str) -> int | None:
    """Id of the dataset's latest ``ragreview sample`` draw, or None."""
    row = db.conn.execute("SELECT max(id) FROM samples WHERE dataset = ?", (dataset,)).fetchone()
    return None if row is None else row[0]


def rowids(
    db: sqlite_utils.Database, dataset: str, flt: ListFilter, limit: int | None = None
) -> array:
    """Rowids of the records passing ``flt``, in list order (the first ``limit``)."""
    where, params = _where(dataset, flt)
    order = "r.position, r.rowid"
    order_params: list[Any] = []
    if flt.queue and flt.sort != "delta":  # the order the draw is to be reviewed in
        order = (
            "(SELECT d.position FROM review_draw_records d WHERE d.record = r.rowid "
            f"AND d.draw = {_DRAW}), {order}"
        )
        order_params.append(dataset)
    if flt.sort == "delta":
        order = f"{DELTA} DESC NULLS LAST, {order}"
    tail = "" if limit is None else f" LIMIT {int(limit)}"
    sql = f"SELECT r.rowid FROM records r WHERE {where} ORDER BY {order}{tail}"
    try:
        cursor = db.conn.execute(sql, [*params, *order_params])
    except sqlite3.OperationalError:  # no stored metrics yet: fall back to file order
        sql = f"SELECT r.rowid FROM records r WHERE {where} ORDER BY r.position, r.rowid{tail}"
        cursor = db.conn.execute(sql, params)
    out = array("q")
    while batch := cursor.fetchmany(10_000):
        out.extend(chain.from_iterable(batch))  # (no Python step per row: 300,000 rows)
    return out


def rows(db: sqlite_utils.Database, ids: Sequence[int]) -> dict[int, ListRow]:
    """The columns the list draws, for a page of rowids."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {
        rowid: ListRow(
            rowid,
            position,
            rid,
            status,
            task,
            bool(disagrees),
            note is not None,
            question if isinstance(question, str) else None,
        )  # fmt: skip
        for rowid, position, rid, status, task, note, disagrees, question in db.conn.execute(
            f"SELECT r.rowid, r.position, r.id, r.status, r.task, r.note, {disagrees_sql()}, "
            "substr(json_extract(r.data, '$.question'), 1, 200) "
            f"FROM records r WHERE r.rowid IN ({marks})",
            list(ids),
        )
    }


def id_range(db: sqlite_utils.Database, dataset: str) -> tuple[str, str]:
    """The dataset's smallest and largest record id (their common prefix is every id's)."""
    # one aggregate per SELECT: SQLite answers a lone min() or max() from the (dataset, id)
    # index in one look-up, but both in one SELECT walk the dataset's index (0.15 s at
    # 300,000 records, before the first list row is drawn)
    row = db.conn.execute(
        "SELECT (SELECT min(id) FROM records WHERE dataset = :d), "
        "(SELECT max(id) FROM records WHERE dataset = :d)",
        {"d": dataset},
    ).fetchone()
    return (row[0] or "", row[1] or "") if row else ("", "")


def disagreeing(db: sqlite_utils.Database, dataset: str) -> set[int]:
    """Rowids of records with a human label that differs from the judge's.

    Driven from ``human_labels`` (small) rather than scanning every record."""
    return {
        r
        for (r,) in db.conn.execute(
            "SELECT DISTINCT h0.record FROM human_labels h0 JOIN records r ON r.rowid = h0.record "
            f"WHERE r.dataset = ? AND {disagrees_sql()}",
            (dataset,),
        )
    }


def tasks(db: sqlite_utils.Database, dataset: str) -> list[str]:
    return [
        t
        for (t,) in db.conn.execute(
            "SELECT DISTINCT task FROM records WHERE dataset = ? AND task IS NOT NULL "
            "ORDER BY task",
            (dataset,),
        )
    ]


def first_unreviewed(db: sqlite_utils.Database, dataset: str) -> int | None:
    """The first record in file order still to review (None when all are reviewed)."""
    row = db.conn.execute(
        "SELECT rowid FROM records WHERE dataset = ? AND status != 'reviewed' "
        "ORDER BY position, rowid LIMIT 1",
        (dataset,),
    ).fetchone()
    return None if row is None else row[0]


def reviewed_count(db: sqlite_utils.Database, dataset: str) -> int:
    """Records marked reviewed: a range scan of the status index, cheap on every keypress."""
    return db.conn.execute(
        "SELECT count(*) FROM records WHERE dataset = ? AND status = 'reviewed'", (dataset,)
    ).fetchone()[0]


def total_count(db: sqlite_utils.Database, dataset: str) -> int:
    """The dataset's record count: the running sums keep it (one look-up, where a count
    walks the whole dataset's index before the first screen); counted without them."""
    row = db.conn.execute(
        "SELECT n FROM metric_totals WHERE dataset = ? AND layer = 'judge' "
        "AND name = 'record._count'",
        (dataset,),
    ).fetchone()
    if row is not None:
        return int(row[0])
    sql = "SELECT count(*) FROM records WHERE dataset = ?"
    return int(db.conn.execute(sql, (dataset,)).fetchone()[0])


def database_path(db: sqlite_utils.Database) -> str:
    """The file behind the connection (for a worker that opens its own connection)."""
    for _, name, path in db.conn.execute("PRAGMA database_list"):
        if name == "main":
            return path
    return ""


def conflicts(db: sqlite_utils.Database, rowid: int) -> list[tuple[str, str]]:
    """(label, target) of the record's reviewer conflicts left by ``ragreview merge``."""
    return db.conn.execute(
        "SELECT name, target FROM merge_conflicts WHERE record = ? ORDER BY name, target",
        (rowid,),
    ).fetchall()


def conflicted_count(db: sqlite_utils.Database, dataset: str) -> int:
    # CROSS JOIN keeps merge_conflicts (empty unless merged) the outer loop: SQLite chose
    # to walk the dataset's records (0.13 s at 300,000 records, at every start)
    return db.conn.execute(
        "SELECT count(DISTINCT c.record) FROM merge_conflicts c CROSS JOIN records r "
        "ON r.rowid = c.record WHERE r.dataset = ?",
        (dataset,),
    ).fetchone()[0]
