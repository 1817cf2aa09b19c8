"""Export throughput against a minimal script, measured in the same run (docs/architecture.md).

Generates the same RAGBench-style file as ``import_bench.py`` (default 100,000 rows) in
each JSON style of ``import_bench.STYLES`` (the worst counts), imports it into a
ragreview DB and into the baseline's minimal DB (neither timed), then times, in turn:

* the baseline: read the raw lines back from its SQLite table in file order and write
  them to a file, synced at the end (in this process: no interpreter start);
* ``python -m ragreview export DB --out FILE --as source`` in a subprocess (the whole
  command, start-up and the sync of its file included), checked to give the input back
  byte for byte.

Both sides start alike (``_fresh``): their output from the run before removed and every
dirty page flushed first, neither timed. The order alternates run by run: the first
run after an import costs more whichever side it is (at 100,000 rows the floor, run
first, took 4.0 s CPU against 3.1-3.2 s in its later runs), and with a fixed order
that cost fell on one side.
Each run prints both sides' wall and CPU time (user + system, every thread): a slow
run shows whether it waited or worked.

Prints both throughputs (medians over ``--repeat`` runs) and their ratio (SPEC: at
least 0.5; the speed issue's target: ragreview's time <= 1.5x the floor's). Then times
``export --as csv`` (every record's stored metrics, one row per record) against
``export --as source`` in the same run, alternating, and prints the time ratio csv /
source (target <= 1.5) and the CSV export's peak RSS.

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
    """The minimal script: the raw lines, in order, to a file on disk. It syncs the file
    before it returns, as ``export`` does (``services.output_file``: an export is not
    done until its file would survive a crash): without that, the floor ended with its
    1.1 GB still in the page cache and its writeback fell in the next step's untimed
    ``os.sync()``."""
    conn = sqlite3.connect(db_path)
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        for (raw,) in conn.execute("SELECT raw FROM records ORDER BY rowid"):
            fh.write(raw)
            n += 1
        fh.flush()
        os.fsync(fh.fileno())
    conn.close()
    return n


def timed_export(db: Path, out: Path, as_: str) -> tuple[float, float]:
    """Wall time (s) and peak RSS (MiB) of one ``export --as as_``."""
    os.sync()  # the previous run's writeback must not land on this one
    command = [sys.executable, "-m", "ragreview", "export", str(db), "--out", str(out)]
    elapsed, peak, _cpu, _load = measured([*command, "--force", "--as", as_])
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


def _floor_run(db: Path, out: Path) -> tuple[float, float]:
    """Wall and CPU time (s) of the minimal script, run in this process."""
    t, cpu = time.perf_counter(), time.process_time()
    baseline_export(db, out)
    return time.perf_counter() - t, time.process_time() - cpu


def _ours_run(db: Path, out: Path) -> tuple[float, float]:
    """Wall and CPU time (s, every thread) of ``ragreview export DB --out OUT``."""
    elapsed, _peak, cpu, _load = measured(
        [sys.executable, "-m", "ragreview", "export", str(db), "--out", str(out), "--force"]
    )
    return elapsed, cpu


def _fresh(path: Path) -> None:
    """Remove the output the next run writes, then flush every dirty page (neither
    timed).

    Each side then starts in the same state: no dirty pages of an earlier run (the
    import's or the other side's) whose writeback would land on it, and no old output
    to free. Freeing a 1 GB file costs ~1.5 s on the bench machine (ext4 mounted with
    ``discard``), and it was paid unevenly: the first run of the first style replaced
    no file, the others did."""
    path.unlink(missing_ok=True)
    os.sync()


def by_style(args, folder: Path, style: str) -> float:
    """Floor and ``export --as source`` on the file written in ``style``, alternating
    which goes first; returns the time ratio ragreview / floor (the issue's target:
    <= 1.5). Each run's wall and CPU time is printed, so a slow run shows which side
    and whether it waited (wall) or worked (CPU)."""
    data = folder / f"ragbench_rows.{style}.jsonl"
    generate(data, args.records, style)
    for stale in folder.glob("*.db*"):
        stale.unlink()
    n = baseline(data, folder / "baseline.db")
    ragreview("import", data, "--db", folder / "ragreview.db")
    print(f"{style}: {n} rows ({data.stat().st_size / 1e6:.0f} MB) imported into both DBs")
    base_out, ours_out = folder / "baseline-out.jsonl", folder / "ragreview-out.jsonl"
    base_runs: list[tuple[float, float]] = []
    ours_runs: list[tuple[float, float]] = []
    for run in range(args.repeat):
        # alternate the order: whatever the first run after the import pays (or the
        # second of a pair) falls on each side alike
        sides = [("floor", base_runs), ("ours", ours_runs)]
        for side, runs in sides if run % 2 == 0 else sides[::-1]:
            if side == "floor":
                _fresh(base_out)
                runs.append(_floor_run(folder / "baseline.db", base_out))
            else:
                _fresh(ours_out)
                runs.append(_ours_run(folder / "ragreview.db", ours_out))
        (bw, bc), (ow, oc) = base_runs[-1], ours_runs[-1]
        first = "floor" if run % 2 == 0 else "ours"
        print(
            f"  run {run + 1} ({first} first): floor {bw:5.2f} s ({bc:5.2f} CPU), "
            f"ours {ow:5.2f} s ({oc:5.2f} CPU): {ow / bw:.2f}x wall, {oc / bc:.2f}x CPU"
        )
    if not filecmp.cmp(data, ours_out, shallow=False):
        sys.exit(f"the export is not the input byte for byte ({style})")
    base_times, ours_times = [w for w, _ in base_runs], [w for w, _ in ours_runs]
    report("baseline (sqlite -> file)", "ragreview export", n, base_times, ours_times)
    slower = statistics.median(ours_times) / statistics.median(base_times)
    cpu = statistics.median(c for _, c in ours_runs) / statistics.median(c for _, c in base_runs)
    print(f"time ragreview / floor: {slower:.2f} (target <= 1.5); CPU: {cpu:.2f}")
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
