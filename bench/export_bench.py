"""Export throughput against a minimal script, measured in the same run (SPEC §12).

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

import argparse
import filecmp
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from import_bench import baseline, generate, ragreview_env


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


def ragreview(*args: str | Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "ragreview", *map(str, args)],
        check=True,
        env=ragreview_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (median)")
    parser.add_argument("--keep", type=Path, help="keep the generated file and DBs here")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="ragreview-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
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
        t = time.perf_counter()
        baseline_export(folder / "baseline.db", folder / "baseline-out.jsonl")
        base_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        ragreview("export", folder / "ragreview.db", "--out", folder / "ragreview-out.jsonl")
        ours_times.append(time.perf_counter() - t)
    if not filecmp.cmp(data, folder / "ragreview-out.jsonl", shallow=False):
        sys.exit("the export is not the input byte for byte")
    base_s, ours_s = statistics.median(base_times), statistics.median(ours_times)
    runs = f" (median of {args.repeat})" if args.repeat > 1 else ""
    print(f"baseline (sqlite -> file):  {base_s:6.1f} s  {n / base_s:9.0f} records/s{runs}")
    print(f"ragreview export:           {ours_s:6.1f} s  {n / ours_s:9.0f} records/s{runs}")
    ratios = ", ".join(f"{b / o:.2f}" for b, o in zip(base_times, ours_times, strict=True))
    print(f"ratio: {base_s / ours_s:.2f} (target >= 0.50; per run: {ratios})")
    if args.keep is None:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


if __name__ == "__main__":
    main()
