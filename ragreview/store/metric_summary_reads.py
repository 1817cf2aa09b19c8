"""The dataset's metrics read back as summaries: the judge and effective means with their
deltas (``dataset_summary``), the same per value of a source field
(``grouped_summaries``), and the source's own stored scores beside them
(``stored_comparison``). They read the running sums ``metric_writes`` keeps
(``metric_totals``), bringing them up to date first where a dataset has none yet
(``metric_writes.ensure``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..core import metrics
from ..core.errors import RagreviewError
from . import settings
from .metric_layers import COUNT, LAYERS, SUMS, summed_rows
from .metric_writes import ensure

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_COLUMNS = ("dataset", "task", "status", "id")


def _field_sql(field: str) -> str:
    """SQL for a grouping field: a records column or a field of the canonical record."""
    if field in _COLUMNS:
        return f"r.{field}"
    if not _FIELD.match(field):
        raise RagreviewError(f"cannot group by {field!r}: give a record field name")
    path = "$." + ".".join(f'"{part}"' for part in field.split("."))
    return f"json_extract(r.data, '{path}')"


def _summary(
    group: dict | None, records: int, reviewed: int, totals: dict[str, dict], settings: dict
) -> dict[str, Any]:
    """The ``metrics --json`` object (docs/architecture.md), plus ``undefined``: per layer, how many records
    each metric is undefined on (those records are left out of its mean)."""
    return {
        "group": group,
        "records": records,
        "reviewed_records": reviewed,
        **{layer: metrics.dataset_values(totals.get(layer, {}), settings) for layer in LAYERS},
        "undefined": {layer: metrics.undefined_counts(totals.get(layer, {})) for layer in LAYERS},
    }


def dataset_summary(
    db: sqlite_utils.Database,
    dataset: str,
    group: dict | None = None,
    *,
    known_settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``records``, ``reviewed_records`` and dataset-level ``judge`` / ``effective`` values.

    Without ``group`` this reads the running sums only (no rescan of the records).
    ``group`` ({field: value}) restricts to the records where each field has that value.
    ``known_settings``: the dataset's settings as the caller already read them, after
    ``ensure`` (the review screen, on every keystroke).
    """
    conn = db.conn
    if known_settings is None:
        ensure(db, dataset)
    values = settings.get_all(db, dataset) if known_settings is None else known_settings
    if not group:
        # Both counts come from indexes or the sums: no scan of the records.
        (reviewed,) = conn.execute(
            "SELECT count(*) FROM records WHERE dataset = ? AND status = 'reviewed'", (dataset,)
        ).fetchone()
        totals: dict[str, dict] = {}
        for layer, name, n, total, total_sq, undefined in conn.execute(
            "SELECT layer, name, n, total, total_sq, undefined FROM metric_totals "
            "WHERE dataset = ?",
            (dataset,),
        ):
            totals.setdefault(layer, {})[name] = (n, total, total_sq, undefined)
        records = totals.get("judge", {}).get(COUNT, (0, 0.0, 0.0, 0))[0]
        return _summary(None, records, reviewed, totals, values)
    where, params = ["r.dataset = ?"], [dataset]
    for field, value in group.items():
        sql = _field_sql(field)
        if value is None:
            where.append(f"{sql} IS NULL")
        else:
            where.append(f"{sql} = ?")
            params.append(value)
    summaries = list(_grouped(db, dataset, " AND ".join(where), params, list(group), values))
    if summaries:
        summaries[0]["group"] = dict(group)
        return summaries[0]
    return _summary(dict(group), 0, 0, {}, values)


def grouped_summaries(db: sqlite_utils.Database, dataset: str, field: str) -> list[dict]:
    """One summary per distinct value of ``field`` (a full scan, for reports)."""
    ensure(db, dataset)
    return list(
        _grouped(db, dataset, "r.dataset = ?", [dataset], [field], settings.get_all(db, dataset))
    )


def _grouped(
    db: sqlite_utils.Database,
    dataset: str,
    where: str,
    params: list,
    fields: list[str],
    settings: dict,
) -> Iterator[dict]:
    keys = ", ".join(_field_sql(f) for f in fields)
    counts = {
        tuple(row[:-2]): row[-2:]
        for row in db.conn.execute(
            f"SELECT {keys}, count(*), count(*) FILTER (WHERE r.status = 'reviewed') "
            f"FROM records r WHERE {where} GROUP BY {keys}",
            params,
        )
    }
    totals: dict[tuple, dict[str, dict]] = {}
    named = ", ".join(f"{_field_sql(f)} AS k{i}" for i, f in enumerate(fields))
    group = ", ".join(f"k{i}" for i in range(len(fields)))
    for row in db.conn.execute(
        f"SELECT {group}, layer, name, {SUMS} FROM ({summed_rows(where, named)}) "
        f"GROUP BY {group}, layer, name",
        params,
    ):
        g = tuple(row[: len(fields)])
        layer, name, n, total, total_sq, undefined = row[len(fields) :]
        totals.setdefault(g, {}).setdefault(layer, {})[name] = (n, total, total_sq, undefined)
    for g in sorted(counts, key=lambda t: tuple((v is None, str(type(v)), v) for v in t)):
        records, reviewed = counts[g]
        yield _summary(dict(zip(fields, g)), records, reviewed, totals.get(g, {}), settings)


def stored_comparison(
    db: sqlite_utils.Database, dataset: str, tolerance: float = 1e-9
) -> dict[str, dict[str, Any]]:
    """The source's stored scores vs our recomputation from the judge's labels, per metric:
    records compared, how many disagree (|diff| > tolerance), max |diff| and RMSE."""
    ensure(db, dataset)
    out: dict[str, dict[str, Any]] = {}
    for name, n, disagree, max_diff, mse in db.conn.execute(
        "SELECT s.name, count(*), sum(abs(s.value - j.value) > ?), max(abs(s.value - j.value)), "
        "avg((s.value - j.value) * (s.value - j.value)) FROM record_metrics s "
        "JOIN record_metrics j ON j.record = s.record AND j.layer = 'judge' AND j.name = s.name "
        "JOIN records r ON r.rowid = s.record "
        "WHERE s.layer = 'stored' AND r.dataset = ? AND s.value IS NOT NULL "
        "AND j.value IS NOT NULL GROUP BY s.name ORDER BY s.name",
        (tolerance, dataset),
    ):
        out[name] = {
            "n": n,
            "disagree": disagree,
            "max_abs_diff": max_diff,
            "rmse": None if mse is None else mse**0.5,
        }
    return out
