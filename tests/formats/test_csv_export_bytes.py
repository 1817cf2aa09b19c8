"""``export --as csv`` writes what it wrote when it recomputed every record's metrics.

The writer now streams the stored metric rows (the ones ``metrics --per-record``
prints) instead of parsing every record and computing its metrics again. The reference
below is the earlier writer, kept verbatim in spirit: each record's metrics computed
from its judge and effective layers (``formats.scores.record_values``), columns in the
order the names first appear, every row buffered. Both must give the same bytes on
every fixture, with overrides and a reviewed-only export.

One correction to the earlier writer: it computed MT-RAG records' metrics without
their source object (``core.metrics.with_source``), so its ``mtrag.length`` could
differ from ``metrics --per-record`` (604 against 605 characters on
mtrag/responses-10.jsonl). The reference here goes through ``with_source`` like every
other computation of a record's metrics.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from ragreview.core.labels import effective
from ragreview.core.metrics import with_source
from ragreview.core.safe_text import csv_cell
from ragreview.formats.scores import record_values
from ragreview.store import history, open_database
from ragreview.store import records as store_records
from ragreview.store import settings as store_settings

from .helpers import FIXTURES, HANDWRITTEN, map_args, run

SOURCES = sorted(
    p
    for p in [
        *FIXTURES.rglob("*.json"),
        *FIXTURES.rglob("*.jsonl"),
        HANDWRITTEN / "own" / "results.csv",
    ]
    if p.is_file()
)


def reference_csv(db_path: Path, dataset: str, reviewed_only: bool) -> str:
    """The earlier ``csv_export.write``: metrics recomputed per record, rows buffered."""
    db = open_database(db_path)
    settings = store_settings.get_all(db, dataset)
    rows: list[dict[str, Any]] = []
    metrics: dict[str, None] = {}
    status = "reviewed" if reviewed_only else None
    for item in store_records.iterate(db, dataset, status=status):
        rec = item.record
        if rec.task == "mtrag" and item.source:  # the correction (module docstring)
            rec = with_source(rec, store_records.loads(item.source))
        judge = record_values(rec, item.judge, settings, item.judge)
        reviewed = record_values(rec, effective(item.judge, item.human), settings, item.judge)
        row: dict[str, Any] = {
            "id": rec.id,
            "dataset": item.dataset,
            "task": rec.task or "",
            "status": item.status,
        }
        for name, value in judge.items():
            metrics.setdefault(name)
            row[f"judge.{name}"] = value
        for name, value in reviewed.items():
            metrics.setdefault(name)
            row[f"reviewed.{name}"] = value
        rows.append(row)
    db.conn.close()
    columns = ["id", "dataset", "task", "status"]
    for name in metrics:
        columns += [f"judge.{name}", f"reviewed.{name}"]
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, restval="", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else csv_cell(v)) for k, v in row.items()})
    return out.getvalue()


def review_some(db_path: Path) -> None:
    """Flip a boolean judge label on every third record and mark every second one
    reviewed, through the store API as the review screen does."""
    db = open_database(db_path)
    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records ORDER BY position")]
    for i, rowid in enumerate(rowids):
        stored = store_records.get(db, rowid)
        if i % 3 == 0:
            flips = [
                (name, target, value)
                for name, targets in stored.judge.items()
                for target, value in targets.items()
                if isinstance(value, bool)
            ]
            if flips:
                name, target, value = flips[0]
                history.set_label(db, rowid, name, target, not value, "tester")
        if i % 2 == 1:
            history.mark(db, rowid, "reviewed", "tester")
    db.conn.close()


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_csv_export_is_byte_identical_to_the_recomputing_writer(
    source: Path, tmp_path: Path
) -> None:
    db = tmp_path / "r.db"
    imported = run("import", source, "--db", db, *map_args(source))
    if imported.exit_code != 0:
        pytest.skip(f"{source.name} does not import on its own: {imported.output}")
    review_some(db)
    conn = open_database(db)
    datasets = [d["name"] for d in store_records.datasets(conn)]
    conn.conn.close()
    for dataset in datasets:
        for reviewed_only in (False, True):
            out = tmp_path / f"{dataset}-{reviewed_only}.csv"
            args = ["export", db, "--out", out, "--as", "csv", "--dataset", dataset, "--force"]
            result = run(*args, *(["--reviewed-only"] if reviewed_only else []))
            assert result.exit_code == 0, result.output
            written = out.read_text(encoding="utf-8")
            assert written == reference_csv(db, dataset, reviewed_only)
