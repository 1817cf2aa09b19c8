"""Export throughput against a minimal script, measured in the same run (docs/architecture.md).

Generates the same RAGBench-style file as ``import_bench.py`` (default 100,000 rows) in
each JSON style of ``import_bench.STYLES`` (the worst counts), imports it into a ragreview DB and into the baseline's minimal DB (neither timed), then
times, alternating:

* the baseline: read the raw lines back from its SQLite table in file order and write
  them to a file;
* ``python -m ragreview export DB --out FILE --as source`` in a subprocess (the whole
  command), checked to give the input back byte for byte.

Prints both throughputs (medians over ``--repeat`` runs) and their ratio (SPEC: at
least 0.5; the speed issue's target: ragreview's time <= 1.5x the floor's). Then times ``export --as csv`` (every record's stored metrics, one row per
record) against ``export --as source`` in the same run, alternating, and prints the
time ratio csv / source (target <= 1.5) and the CSV export's peak RSS.

    python bench/export_bench.py [--records N] [--repeat R] [--keep DIR]
"""

from __future__ import annotations

import filecmp
import os
import sqlite3
import statistics
import sys
import time
from pathlib import Path

# bench is a package (tests import it): run as a script, its parent must be on the path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.agreement_bench import measured  # noqa: E402
from bench.import_bench import STYLES, baseline, clean_up, generate, ragreview, report, setup  # noqa: E402


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


def timed_export(db: Path, out: Path, as_: str) -> tuple[float, float]:
    """Wall time (s) and peak RSS (MiB) of one ``export --as as_``."""
    os.sync()  # the previous run's writeback must not land on this one
    command = [sys.executable, "-m", "ragreview", "export", str(db), "--out", str(out)]
    elapsed, peak, _ = measured([*command, "--force", "--as", as_])
    return elapsed, peak


def csv_against_source(folder: Path, repeat: int) -> None:
    """``export --as csv`` against ``export --as source``, alternating (target <= 1.5)."""
    db = folder / "ragreview.db"
    runs: dict[str, list[tuple[float, float]]] = {"source": [], "csv": []}
    for _ in range(repeat):
        runs["source"].append(timed_export(db, folder / "source-out.jsonl", "source"))
        runs["csv"].append(timed_export(db, folder / "out.csv", "csv"))
    source = statistics.median(s for s, _ in runs["source"])
    csv = statistics.median(s for s, _ in runs["csv"])
    peak = max(m for _, m in runs["csv"])
    each = ", ".join(f"{c / s:.2f}" for (c, _), (s, _) in zip(runs["csv"], runs["source"]))
    print(f"export --as source: {source:6.1f} s, peak {max(m for _, m in runs['source']):.0f} MiB")
    print(f"export --as csv:    {csv:6.1f} s, peak {peak:.0f} MiB")
    print(f"csv / source: {csv / source:.2f} (target <= 1.50; per run: {each})")


def by_style(args, folder: Path, style: str) -> float:
    """Floor and ``export --as source`` alternated on the file written in ``style``;
    returns the time ratio ragreview / floor (the issue's target: <= 1.5)."""
    data = folder / f"ragbench_rows.{style}.jsonl"
    generate(data, args.records, style)
    for stale in folder.glob("*.db*"):
        stale.unlink()
    n = baseline(data, folder / "baseline.db")
    ragreview("import", data, "--db", folder / "ragreview.db")
    print(f"{style}: {n} rows ({data.stat().st_size / 1e6:.0f} MB) imported into both DBs")
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
        sys.exit(f"the export is not the input byte for byte ({style})")
    report("baseline (sqlite -> file)", "ragreview export", n, base_times, ours_times)
    slower = statistics.median(ours_times) / statistics.median(base_times)
    print(f"time ragreview / floor: {slower:.2f} (target <= 1.5)")
    data.unlink()
    return slower


def main() -> None:
    args, folder = setup(__doc__.splitlines()[0])
    worst = max(by_style(args, folder, style) for style in STYLES)
    print(f"worst style: time ragreview / floor {worst:.2f} (target <= 1.5)")
    csv_against_source(folder, args.repeat)  # (on the last style's DB)
    clean_up(folder, args.keep)


if __name__ == "__main__":
    main()
