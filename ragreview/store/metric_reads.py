"""The stored per-record metrics read back: one record's (the TUI's panel), a few
records' (agreement), every record's in file order (``metrics --per-record``), and as a
table, one row per record and one column per (layer, metric), for ``export --as csv``.

The values are the ``record_metrics`` rows ``metric_writes`` keeps current, read with SQL
alone, so none of these parses a record or computes a metric.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..core.metrics import is_public
from . import bulk, metric_writes
from .metric_layers import COUNT, HUMAN, LAYERS

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils


def _where(dataset: str, status: str | None) -> tuple[str, list[Any]]:
    if status is None:
        return "r.dataset = ?", [dataset]
    return "r.dataset = ? AND r.status = ?", [dataset, status]


def metric_names(db: sqlite_utils.Database, dataset: str, status: str | None = None) -> set[str]:
    """The public metrics any of these records has a stored value (or NULL) for."""
    if status is None:  # the dataset's running sums name them: no scan
        rows = db.conn.execute(
            "SELECT name FROM metric_totals WHERE dataset = ? AND layer IN (?, ?) "
            "AND n + undefined > 0",
            (dataset, *LAYERS),
        )
    else:
        where, params = _where(dataset, status)
        rows = db.conn.execute(
            "SELECT DISTINCT m.name FROM records r JOIN record_metrics m ON m.record = r.rowid "
            f"WHERE {where} AND m.layer IN (?, ?)",
            [*params, *LAYERS],
        )
    return {name for (name,) in rows if is_public(name)}


def first_records(
    db: sqlite_utils.Database, dataset: str, names: Sequence[str], status: str | None = None
) -> dict[str, tuple[int, int]]:
    """For each metric name, the first record (file order) with a row for it, as
    ``(position, rowid)``; names no record has are left out. Usually the first record
    has them all, found at once."""
    where, params = _where(dataset, status)
    found: dict[str, tuple[int, int]] = {}
    for name in names:
        row = db.conn.execute(
            f"SELECT r.position, r.rowid FROM records r WHERE {where} AND EXISTS "
            "(SELECT 1 FROM record_metrics m WHERE m.record = r.rowid AND m.layer IN (?, ?) "
            "AND m.name = ?) ORDER BY r.position, r.rowid LIMIT 1",
            [*params, *LAYERS, name],
        ).fetchone()
        if row is not None:
            found[name] = (row[0], row[1])
    return found


def rows(
    db: sqlite_utils.Database, dataset: str, names: Sequence[str], status: str | None = None
) -> Iterator[tuple[Any, ...]]:
    """``(id, dataset, task, status, judge value, effective value, …)`` per record in
    file order, the values of ``names`` in that order (None: undefined or absent)."""
    where, params = _where(dataset, status)
    # (a record without human labels: its judge value stands for the effective one; in
    # file order from the subquery, a co-routine that asks HUMAN once per record, where
    # ordering outside would fold it in and ask it once per column)
    value = "(SELECT value FROM record_metrics WHERE record = r.rowid AND layer = {} AND name = ?)"
    layer = {"judge": "'judge'", "effective": "CASE WHEN h THEN 'effective' ELSE 'judge' END"}
    columns = "".join(f", {value.format(layer[k])}" for _ in names for k in LAYERS)
    keys = [name for name in names for _ in LAYERS]
    yield from db.conn.execute(
        f"SELECT id, dataset, task, status{columns} FROM (SELECT r.rowid, r.id, r.dataset, "
        f"r.task, r.status, {HUMAN} AS h FROM records r WHERE {where} "
        "ORDER BY r.position, r.rowid) r",
        [*keys, *params],
    )


def record_values(db: sqlite_utils.Database, rowid: int) -> dict[str, dict[str, float | None]]:
    """A record's stored metrics: ``{"judge": {...}, "effective": {...}}`` (public names)."""
    return records_values(db, [rowid])[rowid]


def records_values(
    db: sqlite_utils.Database, rowids: list[int]
) -> dict[int, dict[str, dict[str, float | None]]]:
    """``record_values`` of many records at once (rowid -> layers), in pages of 500."""
    out: dict[int, dict[str, dict[str, float | None]]] = {
        r: {layer: {} for layer in LAYERS} for r in rowids
    }
    for rowid, layer, name, value in layer_rows(db, rowids):
        if is_public(name):
            out[rowid][layer][name] = value
    return out


def layer_rows(db: sqlite_utils.Database, rowids: list[int]) -> Iterator[tuple]:
    """``(record, layer, name, value)`` of these records' judge and effective layers,
    components and hidden rows included, by record and name: a record without human
    labels has its judge rows (less the hidden count) given again as its effective
    ones (``metric_layers.HUMAN``)."""
    # (whether the record has human labels, asked once per record: LIMIT keeps SQLite
    # from folding the subquery in, which would ask it once per row)
    for rowid, layer, name, value, human in bulk.rows_in(
        db.conn,
        "SELECT m.record, m.layer, m.name, m.value, r.human FROM (SELECT r.rowid, "
        f"{HUMAN} AS human FROM records r WHERE r.rowid IN ({{ids}}) LIMIT -1) r "
        "JOIN record_metrics m ON m.record = r.rowid AND m.layer IN ('judge', 'effective') "
        "ORDER BY m.record, m.name",
        rowids,
    ):
        if layer == "judge":
            yield rowid, layer, name, value
            if not human and name != COUNT:
                yield rowid, "effective", name, value
        elif human:
            yield rowid, layer, name, value


def iter_record_values(db: sqlite_utils.Database, dataset: str) -> Iterator[dict[str, Any]]:
    """``{"id", "dataset", "judge", "effective"}`` per record, in file order.

    One query, streamed, one row per record: fetching rows into Python is the cost, so
    each public metric the dataset has (the names in its sums, ``metric_totals``) is a
    column looked up by primary key, ``NULL`` where the record has no such row and
    ``'N'`` where its value is undefined (the values themselves stay the stored floats:
    SQLite's own number text is not Python's repr). A record without human labels has
    its judge values read once: they are its effective values (``metric_layers.HUMAN``)."""
    metric_writes.ensure(db, dataset)
    names: dict[str, list[str]] = {layer: [] for layer in LAYERS}
    for layer, name in db.conn.execute(
        "SELECT layer, name FROM metric_totals WHERE dataset = ? AND instr(name, '._') = 0 "
        "AND layer IN ('judge', 'effective') ORDER BY layer, name",
        (dataset,),
    ):
        names[layer].append(name)
    judge_names, effective_names = names["judge"], names["effective"]
    value = (
        "(SELECT ifnull(m.value, 'N') FROM record_metrics m "
        "WHERE m.record = r.rowid AND m.layer = '{}' AND m.name = ?)"
    )
    columns = [value.format("judge")] * len(judge_names)
    columns += [f"CASE WHEN h THEN {value.format('effective')} END"] * len(effective_names)
    sql = (
        f"SELECT id, h{''.join(', ' + c for c in columns)} FROM (SELECT r.rowid, r.id, "
        "EXISTS (SELECT 1 FROM human_labels WHERE record = r.rowid) AS h "
        "FROM records r WHERE r.dataset = ? ORDER BY r.position, r.rowid) r"
    )
    split = 2 + len(judge_names)
    for row in db.conn.execute(sql, (*judge_names, *effective_names, dataset)):
        judge = _values(judge_names, row[2:split])
        effective = _values(effective_names, row[split:]) if row[1] else dict(judge)
        yield {"id": row[0], "dataset": dataset, "judge": judge, "effective": effective}


def _values(names: list[str], values: tuple) -> dict[str, float | None]:
    """name -> value for the metrics a record has (``'N'``: undefined, ``None``)."""
    return {n: None if v == "N" else v for n, v in zip(names, values) if v is not None}
