"""Export throughput against a minimal script, measured in the same run (docs/architecture.md).

Generates the same RAGBench-style file as ``import_bench.py`` (default 100,000 rows),
imports it into a ragreview DB and into the baseline's minimal DB (neither timed), then
times, alternating:

* the baseline: read the raw lines back from its SQLite table in file order and write
  them to a file;
* ``python -m ragreview export DB --out FILE --as source`` in a subprocess (the whole
  command), checked to give the input back byte for byte.

Prints both throughputs (medians over ``--repeat`` runs) and their ratio; the target is
at least 0.5.

    python bench/export_bench.py [--records N] [--repeat R] [--keep DIR]
"""

from __future__ import annotations

import filecmp
import os
import sqlite3
import sys
import time
from pathlib import Path

from import_bench import baseline, clean_up, generate, ragreview, report, setup


def baseline_export(db_path: Path, out: Path) -> int:
    """The minimal script: the raw lines, in order, to a file."""
    conn = sqlite3.connect(db_path)
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        for (raw,) in conn.execute("SELECT raw FROM records ORDER BY rowid"):
            fh.write(raw)
            n += 1
    conn.close()
    return n


def main() -> None:
    args, folder = setup(__doc__.splitlines()[0])
    data = folder / "ragbench_rows.jsonl"
    if not data.exists():
        generate(data, args.records)
    for stale in folder.glob("*.db*"):
        stale.unlink()
    n = baseline(data, folder / "baseline.db")
    ragreview("import", data, "--db", folder / "ragreview.db")
    print(f"{n} rows ({data.stat().st_size / 1e6:.0f} MB) imported into both DBs")

    base_times, ours_times = [], []
    for _ in range(args.repeat):
        # Flush what the previous run left dirty in the page cache first: otherwise its
        # writeback lands on whichever export runs next (ragreview's syncs its file).
        os.sync()
        t = time.perf_counter()
        baseline_export(folder / "baseline.db", folder / "baseline-out.jsonl")
        base_times.append(time.perf_counter() - t)
        os.sync()
        t = time.perf_counter()
        out = folder / "ragreview-out.jsonl"
        ragreview("export", folder / "ragreview.db", "--out", out, "--force")  # runs 2, 3 replace
        ours_times.append(time.perf_counter() - t)
    if not filecmp.cmp(data, folder / "ragreview-out.jsonl", shallow=False):
        sys.exit("the export is not the input byte for byte")
    report("baseline (sqlite -> file)", "ragreview export", n, base_times, ours_times)
    clean_up(folder, args.keep)


if __name__ == "__main__":
    main()
