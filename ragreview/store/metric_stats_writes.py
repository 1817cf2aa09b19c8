"""Per-record sufficient statistics, so that a metric variant change is an aggregate.

``metric_stats`` holds, per record and layer (``judge``, and ``effective`` while the
record has human labels: ``metric_layers``), what the metric families whose values
depend on a setting need to give any variant's values: TRACe's sentence counts and
lengths (``trace.stats``), RGB's verdicts and both variants' components
(``rgb.stats``), the long-form S / NS / IR counts (``longform.stats``), and on the
judge row the source's stored F1 scores at any K.
Its columns are the stats the families declare (``Family.stats``): a family's new
stats are added when a database is opened (``extend``), with no migration.
They are written with the record's metric rows (``metric_writes.refresh`` and
``metric_import_writes``), in the same transaction.

``apply`` rewrites the ``record_metrics`` rows and ``metric_totals`` sums a setting
changes with SQL over this table, never reading a record. Its formulas repeat each
family's ``values`` function; tests/store/test_metric_stats.py holds the two equal on
every declared variant (fixtures and seeded random records). A setting without
formulas here (``SQL_SETTINGS``) is applied by recomputing the records.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from ..core.families import FAMILIES
from ..core.metrics import aggregate
from .metric_layers import HUMAN

# The stats columns are the families' declarations (``Family.stats``, in registration
# order: TRACe's, RGB's, long-form's): m012 created the built-in ones; a family's new
# stats get their columns when a database is opened (``extend``), with no migration.
_declared: tuple[tuple[Any, ...], tuple[str, ...], tuple[str, ...]] = ((), (), ())


def declared() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(stats names as the core gives them, their SQL types)``, every family's."""
    global _declared
    key = tuple(FAMILIES)
    if _declared[0] != key:
        stats = [s for family in FAMILIES for s in family.stats]
        _declared = (key, tuple(n for n, _ in stats), tuple(kind for _, kind in stats))
    return _declared[1], _declared[2]


def column(name: str) -> str:
    return name.replace(".", "_")


def columns() -> tuple[str, ...]:
    """The ``metric_stats`` columns a ``row`` fills, in its order."""
    names, _ = declared()
    return ("record", "layer", *(column(n) for n in names), "longform_stored_f1")


def missing(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """``(column, type)`` of the declared stats the database's table lacks."""
    have = {r[1] for r in conn.execute("PRAGMA table_info(metric_stats)")}
    names, kinds = declared()
    return [(column(n), k) for n, k in zip(names, kinds, strict=True) if column(n) not in have]


def extend(conn: sqlite3.Connection) -> None:
    """Add the columns of stats a family declares that the table lacks (idempotent; an
    existing column, and so an existing database's meaning, is left as it is). Rows
    written before hold NULL there until their record's metrics are next written; a
    new family's settings have no SQL here (``SQL_SETTINGS``), so a change of one
    recomputes the records, which writes them."""
    for name, kind in missing(conn):
        if kind not in ("INTEGER", "REAL", "TEXT"):
            raise ValueError(f"stats column {name}: type {kind!r}")
        conn.execute(f"ALTER TABLE metric_stats ADD COLUMN {name} {kind}")


def row(rowid: int, layer: str, stats: Mapping[str, Any], stored_f1: Mapping | None) -> tuple:
    """One ``metric_stats`` row: ``stats`` as ``core.metrics.record_values`` filled it,
    and (judge row) the record's stored F1 scores (``aggregate.stored_f1``)."""
    f1 = json.dumps(stored_f1) if stored_f1 else None
    names, _ = declared()
    return (rowid, layer, *map(stats.get, names), f1)  # (map: no generator per record)


def put(conn: sqlite3.Connection, rowids: list[int], rows: list[tuple]) -> None:
    """Replace these records' stats rows with ``rows`` (in the caller's transaction)."""
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM metric_stats WHERE record IN ({marks})", chunk)
    cols = columns()
    conn.executemany(
        f"INSERT INTO metric_stats ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
        rows,
    )


def complete(conn: sqlite3.Connection, dataset: str) -> bool:
    """Every record of the dataset has its stats (not so in a DB from before m012, until
    a full recompute has written them)."""
    missing = conn.execute(
        "SELECT 1 FROM records r WHERE r.dataset = ? AND NOT EXISTS "
        "(SELECT 1 FROM metric_stats s WHERE s.record = r.rowid AND s.layer = 'judge') LIMIT 1",
        (dataset,),
    ).fetchone()
    return missing is None


# -- a variant's values in SQL (each repeats the family's ``values``) -----------------


def _ratio(num: str, den: str, otherwise: str) -> str:
    return f"CASE WHEN s.{den} THEN CAST(s.{num} AS REAL) / s.{den} ELSE {otherwise} END"


def _trace(variant: str) -> dict[str, tuple[str, str]]:
    """name -> (value, condition for the row to exist) under a TRACe variant."""
    if variant == "ragbench":
        rel = _ratio("trace_relevant_listed", "trace_sentences", "0.0")
        util = _ratio("trace_utilized_listed", "trace_sentences", "0.0")
        comp = _ratio("trace_both", "trace_relevant_listed", "1.0")
        adh = "s.trace_adherent"
    elif variant == "length":
        rel = _ratio("trace_relevant_chars", "trace_chars", "0.0")
        util = _ratio("trace_utilized_chars", "trace_chars", "0.0")
        comp = _ratio("trace_both_chars", "trace_relevant_chars", "1.0")
        adh = "s.trace_adherent"
    else:  # capped20
        rel = "min(1.0, CAST(s.trace_relevant AS REAL) / 20)"
        util = (
            "CASE WHEN s.trace_relevant THEN "
            "min(1.0, CAST(s.trace_utilized AS REAL) / s.trace_relevant) ELSE 0.0 END"
        )
        comp = (
            "CASE WHEN s.trace_relevant THEN CAST(s.trace_both AS REAL) / s.trace_relevant "
            "WHEN s.trace_utilized THEN 0.0 ELSE 1.0 END"
        )
        adh = "s.trace_all_supported"
    present = "s.trace_sentences IS NOT NULL"
    out = {
        "trace.relevance": (rel, present),
        "trace.utilization": (util, present),
        "trace.completeness": (comp, present),
        "trace.adherence": (adh, present),
    }
    for name, ours in (("relevance", rel), ("utilization", util), ("completeness", comp)):
        stored = f"s.trace_stored_{name}"
        diff = f"({stored} - ({ours}))"
        out[f"trace._sqerr_{name}"] = (f"{diff} * {diff}", f"{stored} IS NOT NULL")
    has = f"{present} AND s.trace_stored_adherence IS NOT NULL"
    out["trace._hall"] = (f"1.0 - ({adh})", has)
    out["trace._hall_tp"] = (f"(1.0 - ({adh})) * (1.0 - s.trace_stored_adherence)", has)
    return out


def _rgb(variant: str) -> dict[str, tuple[str, str]]:
    variant = "reference" if variant == "reference" else "simple"
    return {
        "rgb._rejection": (f"s.rgb_rejection_{variant}", "s.rgb_negative = 1"),
        "rgb._corrected": (f"s.rgb_corrected_{variant}", "s.rgb_counterfactual = 1"),
    }


def _longform(k: int) -> dict[str, tuple[str, str]]:
    s, ns, ir = "s.longform_supported", "s.longform_not_supported", "s.longform_irrelevant"
    recall = f"min(1.0, CAST({s} AS REAL) / {k})"
    precision = f"(CAST({s} AS REAL) / ({s} + {ns}))"
    present = f"{s} IS NOT NULL"
    return {
        "longform.recall_at_k": (f"CASE WHEN {s} + {ns} + {ir} THEN {recall} END", present),
        "longform.f1_at_k": (
            f"CASE WHEN {s} + {ns} + {ir} = 0 THEN NULL WHEN {s} = 0 THEN 0.0 "
            f"ELSE 2.0 * {precision} * {recall} / ({precision} + {recall}) END",
            present,
        ),
    }


# The settings whose metric rows are SQL over the stats rows; any other metric setting
# (deepeval.penalize_ambiguous_claims) is applied by recomputing the records.
SQL_SETTINGS = ("trace.variant", "rgb.variant", "longform.k")


def formulas(name: str, value: Any) -> dict[str, tuple[str, str]]:
    """The metric rows a setting's value determines: name -> (SQL value, row exists)."""
    if name == "trace.variant":
        return _trace(value)
    if name == "rgb.variant":
        return _rgb(value)
    if name == "longform.k":
        return _longform(int(value))
    raise ValueError(f"no stats for setting {name!r}")


def changed(name: str, value: Any, old: Any) -> dict[str, tuple[str, str]]:
    """The metric rows whose formula differs between the setting's ``old`` and new
    ``value`` (e.g. ragbench → length leaves adherence and hallucination as they are)."""
    before = formulas(name, old)
    return {n: f for n, f in formulas(name, value).items() if before.get(n) != f}


def apply(conn: sqlite3.Connection, dataset: str, name: str, value: Any, old: Any) -> None:
    """Rewrite the dataset's metric rows and running sums that setting ``name`` decides
    and that change from ``old`` to ``value``, from the stats rows (in the caller's
    transaction; every record must have its stats: ``complete``)."""
    if name == "longform.k":
        _stored_f1(conn, dataset, int(value))
    rows = changed(name, value, old)
    if not rows:
        return
    names = list(rows)
    marks = ",".join("?" * len(names))
    # One pass over the stats rows, each changed metric's row written by primary key
    # and only where its value changes (a variant moves some, not all). An upsert,
    # not UPDATE … FROM: SQLite runs that in two passes through a temporary table
    # (1.7 s against 1.1 s for capped20 at 100,000 records). The rows it writes are
    # the ones that exist, as a metric's row exists exactly where its condition holds
    # (the sums below count on the same).
    order = sorted(names)  # the primary key's order within a record and layer
    metric = " UNION ALL ".join(f"SELECT {i} AS i, ? AS name" for i in range(len(order)))
    value = " ".join(f"WHEN {i} THEN {rows[n][0]}" for i, n in enumerate(order))
    present = " ".join(f"WHEN {i} THEN ({rows[n][1]})" for i, n in enumerate(order))
    conn.execute(
        "INSERT INTO record_metrics (record, layer, name, value) "
        f"SELECT s.record, s.layer, n.name, CASE n.i {value} END "
        f"FROM records r JOIN metric_stats s ON s.record = r.rowid CROSS JOIN ({metric}) n "
        f"WHERE r.dataset = ? AND s.layer IN ('judge', 'effective') AND CASE n.i {present} END "
        "ON CONFLICT (record, layer, name) DO UPDATE SET value = excluded.value "
        "WHERE value IS NOT excluded.value",
        (*order, dataset),
    )
    # The sums of those metrics, from the same formulas over the stats rows (the
    # record_metrics rows they rewrote are these values, row for row), in one scan per
    # layer, in the records' order as rebuild_totals adds them.
    conn.execute(
        f"DELETE FROM metric_totals WHERE dataset = ? AND name IN ({marks})", (dataset, *names)
    )
    # (each value computed once per row: LIMIT keeps SQLite from flattening the
    # subquery, which would evaluate every formula once per aggregate)
    values = ", ".join(
        f"CASE WHEN {cond} THEN {v} END AS v{i}, ({cond}) AS c{i}"
        for i, (v, cond) in enumerate(rows.values())
    )
    sums = ", ".join(
        f"count(v{i}), total(v{i}), total(v{i} * v{i}), coalesce(sum(c{i}), 0) - count(v{i})"
        for i in range(len(rows))
    )
    # (the effective sums read a record's judge stats where it has no human labels: its
    # effective layer is then not stored, metric_layers)
    layers = {
        "judge": "'judge'",
        "effective": f"CASE WHEN {HUMAN} THEN 'effective' ELSE 'judge' END",
    }
    sql = (
        f"SELECT {sums} FROM (SELECT {values} FROM records r JOIN metric_stats s "
        "ON s.record = r.rowid AND s.layer = {} WHERE r.dataset = ? LIMIT -1)"
    )
    for layer in ("judge", "effective"):
        found = conn.execute(sql.replace("{}", layers[layer]), (dataset,)).fetchone()
        totals = []
        for i, n in enumerate(names):
            count, total, total_sq, undefined = found[4 * i : 4 * i + 4]
            if count or undefined:
                totals.append((dataset, layer, n, count, total, total_sq, undefined))
        conn.executemany(
            "INSERT INTO metric_totals (dataset, layer, name, n, total, total_sq, undefined) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            totals,
        )


def _stored_f1(conn: sqlite3.Connection, dataset: str, k: int) -> None:
    """The stored F1 compared with ``longform.f1_at_k`` at this K (``stored`` layer):
    picked in Python, as JSON numbers are parsed exactly there."""
    key = "longform.f1_at_k"
    rows = conn.execute(
        "SELECT s.record, s.longform_stored_f1 FROM metric_stats s "
        "JOIN records r ON r.rowid = s.record WHERE r.dataset = ? AND s.layer = 'judge' "
        "AND s.longform_stored_f1 IS NOT NULL",
        (dataset,),
    ).fetchall()
    conn.execute(
        "DELETE FROM record_metrics WHERE layer = 'stored' AND name = ? AND record IN "
        "(SELECT rowid FROM records WHERE dataset = ?)",
        (key, dataset),
    )
    picked = []
    for rowid, text in rows:
        value = aggregate.stored_f1_at_k(json.loads(text), k)
        if value is not aggregate.ABSENT:
            picked.append((rowid, "stored", key, value))
    conn.executemany(
        "INSERT INTO record_metrics (record, layer, name, value) VALUES (?, ?, ?, ?)", picked
    )
