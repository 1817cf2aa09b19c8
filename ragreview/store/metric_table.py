"""The stored per-record metrics as a table: one row per record, one column per
(layer, metric), for ``export --as csv``.

The values are the ``record_metrics`` rows that ``metrics --per-record`` prints (kept
current by ``metric_rows``), read with one SQL statement in file order, so an export
parses no record and computes no metric.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..core.metrics import is_public
from .metric_rows import LAYERS

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
    value = "(SELECT value FROM record_metrics WHERE record = r.rowid AND layer = ? AND name = ?)"
    columns = ", ".join(value for _ in names for _ in LAYERS)
    select = f"SELECT r.id, r.dataset, r.task, r.status{', ' if names else ''}{columns}"
    keys = [part for name in names for layer in LAYERS for part in (layer, name)]
    yield from db.conn.execute(
        f"{select} FROM records r WHERE {where} ORDER BY r.position, r.rowid", [*keys, *params]
    )
