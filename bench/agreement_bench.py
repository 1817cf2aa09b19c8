"""``agreement`` at scale: time and peak memory against the targets of issue 17.

Generates the RAGBench-style file of ``import_bench.py`` (default 100,000 rows),
imports it, then marks ``--reviewed`` records (default 10,000, spread over the file)
reviewed through the store API, overriding a label on every fifth of them and giving
a blind-pass label on every twentieth (none of it timed). Then times, in subprocesses
(the whole command, as a user runs it):

* ``python -m ragreview agreement DB --json``  (target <= 1.5 s, <= 150 MiB peak RSS);
* ``python -m ragreview agreement DB --html FILE``  (target <= 2 s).

Peak RSS and CPU time (user + system) are the command's own, from ``/usr/bin/time``;
on a shared machine the CPU time says more than the wall time, which includes waiting
for a core. Prints the median over ``--repeat`` runs and each run, with the load
average as it ended.

    python bench/agreement_bench.py [--records N] [--reviewed R] [--repeat K] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# bench is a package (tests import it): run as a script, its parent must be on the path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.import_bench import REPO, clean_up, generate, ragreview, ragreview_env  # noqa: E402

sys.path.insert(0, str(REPO))

TARGETS = {"json": (1.5, 150.0), "html": (2.0, None)}


def mark_reviewed(db_path: Path, reviewed: int) -> int:
    """Mark ``reviewed`` records reviewed, spread evenly over the file, with overrides."""
    from ragreview.store import history, open_database
    from ragreview.store import records as store_records

    db = open_database(db_path)
    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records ORDER BY position")]
    step = max(1, len(rowids) // reviewed)
    chosen = rowids[::step][:reviewed]
    for i, rowid in enumerate(chosen):
        if i % 5 == 0 or i % 20 == 1:
            stored = store_records.get(db, rowid)
            keys = [k for k, _ in stored.record.doc_sentences]
            if i % 5 == 0:  # an override: a sentence the judge left alone is relevant
                history.set_label(db, rowid, "relevant", keys[i % len(keys)], True, "bench")
                history.set_label(db, rowid, "supported", "a", i % 2 == 0, "bench")
            else:  # a blind first pass on a few records
                history.set_label(db, rowid, "utilized", keys[0], i % 3 == 0, "bench", blind=True)
        history.mark(db, rowid, "reviewed", "bench")
    db.conn.close()
    return len(chosen)


def measured(command: list[str]) -> tuple[float, float, float, float]:
    """Wall time (s), peak RSS (MiB), CPU time (s, user + system) of ``command``, and
    the 1-minute load average as it ended (on a shared machine wall time says little
    without it).

    The peak comes from ``/usr/bin/time``, which starts the command itself: the
    rusage of a child this process starts directly also counts this process's own
    memory (Python spawns with vfork, and exec records the borrowed memory's high
    water mark as the child's)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        t = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%U %S %M", "-o", report.name, *command],
            env=ragreview_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        elapsed = time.perf_counter() - t
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)} failed ({done.returncode})")
        user, system, kib = report.read().split()[-3:]
    return elapsed, int(kib) / 1024, float(user) + float(system), os.getloadavg()[0]


def timed(*args: str | Path) -> tuple[float, float, float, float]:
    """``measured`` of ``python -m ragreview ARGS``."""
    return measured([sys.executable, "-m", "ragreview", *map(str, args)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--reviewed", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (median)")
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the file and DB here")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="ragreview-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    data, db = folder / "ragbench_rows.jsonl", folder / "agreement.ragreview.db"
    if not db.exists():  # --keep reuses a DB set up by an earlier run
        if not data.exists():
            generate(data, args.records)
        ragreview("import", data, "--db", db)
        n = mark_reviewed(db, args.reviewed)
        print(f"{args.records} records imported, {n} marked reviewed")
    html = folder / "report.html"
    runs: dict[str, list[tuple[float, float, float, float]]] = {"json": [], "html": []}
    for _ in range(args.repeat):
        runs["json"].append(timed("agreement", db, "--json"))
        runs["html"].append(timed("agreement", db, "--html", html))
    for name, got in runs.items():
        seconds = statistics.median(s for s, _, _, _ in got)
        peak = statistics.median(m for _, m, _, _ in got)
        cpu = statistics.median(c for _, _, c, _ in got)
        limit_s, limit_mib = TARGETS[name]
        target = f"target <= {limit_s} s" + (f", <= {limit_mib:.0f} MiB" if limit_mib else "")
        each = ", ".join(
            f"{s:.2f} s/{c:.2f} s CPU/{m:.0f} MiB/load {load:.1f}" for s, m, c, load in got
        )
        print(
            f"agreement --{name}: {seconds:.2f} s wall, {cpu:.2f} s CPU, peak {peak:.0f} MiB "
            f"({target}; runs: {each})"
        )
    clean_up(folder, args.keep)


if __name__ == "__main__":
    main()
