"""Parquet import against the same rows' JSON Lines import, measured in the same run.

Generates the RAGBench-style file of ``import_bench.py`` (default 100,000 rows), writes
the same rows as parquet (pyarrow, row groups of 10,000), then times
``python -m ragreview import`` of each into a fresh DB, alternating. Prints both
throughputs (medians over ``--repeat`` runs) and the ratio JSONL time / parquet time
(target >= 1.0: parquet no slower than the same rows as JSON Lines). Each row costs more
CPU than a JSON line (Arrow's decode, ``to_pylist`` and the JSON text the record keeps as
its source, against one ``orjson.loads``); the import wins it back by sharing the file's
batches between two workers (``services.import_pipeline``), so the ratio needs both cores.
Needs pyarrow (the ``parquet`` extra).

    python bench/parquet_bench.py [--records N] [--repeat R] [--keep DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

# bench is a package (tests import it): run as a script, its parent must be on the path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.import_bench import clean_up, generate, report, setup, timed  # noqa: E402

ROW_GROUP = 10_000


def to_parquet(jsonl: Path, out: Path) -> None:
    """The rows of ``jsonl`` as parquet, written a row group at a time."""
    writer = None
    rows: list[dict] = []

    def flush() -> None:
        nonlocal writer
        names = list(dict.fromkeys(k for row in rows for k in row))
        columns = {n: [row.get(n) for row in rows] for n in names}
        if writer is None:
            table = pa.table(columns)
            writer = pq.ParquetWriter(str(out), table.schema)
        else:  # the first group's types for every group
            table = pa.table(columns, schema=writer.schema)
        writer.write_table(table)
        rows.clear()

    with jsonl.open("rb") as fh:
        for line in fh:
            rows.append(orjson.loads(line))
            if len(rows) == ROW_GROUP:
                flush()
    if rows:
        flush()
    assert writer is not None
    writer.close()


def main() -> None:
    args, folder = setup(__doc__.splitlines()[0])
    jsonl = folder / "ragbench_rows.jsonl"
    parquet = folder / "ragbench_rows.parquet"
    generate(jsonl, args.records)
    to_parquet(jsonl, parquet)
    mb = jsonl.stat().st_size / 1e6, parquet.stat().st_size / 1e6
    print(f"{args.records} rows: JSONL {mb[0]:.0f} MB, parquet {mb[1]:.0f} MB")
    jsonl_times, parquet_times = [], []
    peaks: dict[str, int] = {"JSONL": 0, "parquet": 0}
    for _ in range(args.repeat):
        for source, times, name in (
            (jsonl, jsonl_times, "JSONL"),
            (parquet, parquet_times, "parquet"),
        ):
            db = folder / f"{source.suffix[1:]}.ragreview.db"
            for stale in folder.glob(f"{db.name}*"):
                stale.unlink()
            elapsed, peak, _cpu = timed(
                [sys.executable, "-m", "ragreview", "import", str(source), "--db", str(db)]
            )
            times.append(elapsed)
            peaks[name] = max(peaks[name], peak)
    # the formats issue's target: parquet at least as fast as the same rows as JSON Lines
    report("import JSONL", "import parquet", args.records, jsonl_times, parquet_times, 1.0)
    # (memory that does not grow with the file: compare runs at two --records)
    print(
        "peak RSS, all processes: "
        + ", ".join(f"{name} {peak / 2**20:.0f} MiB" for name, peak in peaks.items())
    )
    clean_up(folder, args.keep)


if __name__ == "__main__":
    main()
