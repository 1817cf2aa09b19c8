"""``export --as csv``: one row per record for spreadsheets.

Columns: id, dataset, task, status, then every per-record metric twice, as the judge's
labels give it (``judge.<metric>``) and as the reviewed (effective) labels give it
(``reviewed.<metric>``). Undefined metrics are empty cells. Text cells (ids come from
the input) go through ``csv_cell``: no control characters, and a cell a spreadsheet
would run as a formula (``=cmd|…``) is prefixed with ``'``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Any, TextIO

from ..core.labels import effective
from ..core.safe_text import csv_cell
from .base import ExportRecord
from .scores import record_values

NAME = "csv"
BASE = ("id", "dataset", "task", "status")


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    # Metric columns are only known once every record has been seen (families differ
    # per record), so the rows are buffered: a few numbers per record.
    rows: list[dict[str, Any]] = []
    metrics: dict[str, None] = {}
    for item in items:
        rec = item.record
        judge = record_values(rec, item.judge, settings, item.judge)
        reviewed = record_values(rec, effective(item.judge, item.human), settings, item.judge)
        row: dict[str, Any] = {
            "id": rec.id,
            "dataset": getattr(item, "dataset", ""),
            "task": rec.task or "",
            "status": getattr(item, "status", ""),
        }
        for name, value in judge.items():
            metrics.setdefault(name)
            row[f"judge.{name}"] = value
        for name, value in reviewed.items():
            metrics.setdefault(name)
            row[f"reviewed.{name}"] = value
        rows.append(row)
    columns = [*BASE]
    for name in metrics:
        columns += [f"judge.{name}", f"reviewed.{name}"]
    writer = csv.DictWriter(out, columns, restval="", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else csv_cell(v)) for k, v in row.items()})
    return len(rows)
