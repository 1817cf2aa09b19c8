"""``export --as csv``: one row per record for spreadsheets.

Columns: id, dataset, task, status, then every per-record metric twice, as the judge's
labels give it (``judge.<metric>``) and as the reviewed (effective) labels give it
(``reviewed.<metric>``), metrics in the order they first appear in the file. Undefined
metrics are empty cells. Text cells (ids come from the input) go through ``csv_cell``:
no control characters, and a cell a spreadsheet would run as a formula (``=cmd|…``) is
prefixed with ``'``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from ..core.safe_text import csv_cell

NAME = "csv"
BASE = ("id", "dataset", "task", "status")


def header(metrics: Sequence[str]) -> list[str]:
    return [*BASE, *(f"{layer}.{name}" for name in metrics for layer in ("judge", "reviewed"))]


def write(rows: Iterable[Sequence[Any]], out: TextIO, metrics: Sequence[str]) -> int:
    """Write the header and ``rows`` (each ``BASE``'s values, then the judge and the
    reviewed value of each of ``metrics``, None where undefined), one at a time; the
    number of rows."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header(metrics))
    count = 0
    for row in rows:
        writer.writerow(["" if v is None else csv_cell(v) for v in row])
        count += 1
    return count
