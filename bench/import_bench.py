"""Import throughput against a minimal script, measured in the same run (docs/architecture.md).

Generates a RAGBench-style JSON Lines file (default 100,000 rows, 5 documents of 5–12
sentences each) in a temporary folder, then times:

* the baseline: parse every line with orjson and bulk-insert the raw lines plus one
  row per judge label into SQLite (WAL, one transaction);
* ``python -m ragreview import FILE --db DB`` in a subprocess (the whole command).

Prints both throughputs (medians over ``--repeat`` alternating runs: single runs vary
a lot with disk and page-cache state) and their ratio; the target is at least 0.5.

With ``--one-core`` both run under ``taskset -c 0`` (the baseline in a process of its
own), so the ratio holds when the second core is busy (target >= 0.7), and the peak
memory of ragreview's processes together (main + worker, sampled from /proc) is printed
(target <= 250 MiB).

    python bench/import_bench.py [--records N] [--repeat R] [--keep DIR] [--one-core]
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

# bench is a package (tests import it): run as a script, its parent must be on the path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import json_styles  # noqa: E402
from bench.json_styles import STYLES  # noqa: E402  (one writer of the JSON styles)

REPO = Path(__file__).resolve().parents[1]
WORDS = (
    "the patient study virus cells reported increased levels of protein during infection "
    "treatment trial results showed significant reduction in symptoms among adults"
).split()


def letters(i: int) -> str:
    out = ""
    n = i + 1
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(97 + r) + out
    return out


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))).capitalize() + "."


def make_row(i: int, rng: random.Random) -> dict:
    docs = [
        [[f"{d}{letters(s)}", sentence(rng)] for s in range(rng.randint(5, 12))] for d in range(5)
    ]
    keys = [k for doc in docs for k, _ in doc]
    response = [[letters(s), sentence(rng)] for s in range(rng.randint(2, 5))]
    relevant = rng.sample(keys, rng.randint(0, 6))
    utilized = [k for k in relevant if rng.random() < 0.6]
    unsupported = [k for k, _ in response if rng.random() < 0.15]
    support = [
        {
            "response_sentence_key": k,
            "explanation": "Checked against the documents.",
            "supporting_sentence_keys": [] if k in unsupported else rng.sample(keys, 2),
            "fully_supported": None,
        }
        for k, _ in response
    ]
    total = len(keys)
    return {
        "id": f"synthetic-{i}",
        "question": sentence(rng),
        "documents": [" ".join(t for _, t in doc) for doc in docs],
        "response": " ".join(t for _, t in response),
        "generation_model_name": "gpt-3.5-turbo-0125",
        "annotating_model_name": "gpt-4-turbo-2024-04-09",
        "dataset_name": "synthetic",
        "documents_sentences": docs,
        "response_sentences": response,
        "sentence_support_information": support,
        "unsupported_response_sentence_keys": unsupported,
        "adherence_score": not unsupported,
        "overall_supported_explanation": "All sentences were checked.",
        "relevance_explanation": "Some sentences are relevant.",
        "all_relevant_sentence_keys": relevant,
        "all_utilized_sentence_keys": utilized,
        "relevance_score": len(relevant) / total,
        "utilization_score": len(utilized) / total,
        "completeness_score": (
            len(set(relevant) & set(utilized)) / len(relevant) if relevant else 1.0
        ),
    }


def generate(path: Path, n: int, style: str = "orjson") -> None:
    """``n`` RAGBench-style rows (``make_row``, seeded) in one of ``json_styles.STYLES``."""
    rng = random.Random(2333)
    json_styles.write(path, (make_row(i, rng) for i in range(n)), style)


def baseline(path: Path, db_path: Path) -> int:
    """The minimal script: orjson parse, raw lines and one row per label into SQLite."""
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE records (rowid INTEGER PRIMARY KEY, id TEXT UNIQUE, raw TEXT)")
    conn.execute("CREATE TABLE labels (record INT, name TEXT, target TEXT, value TEXT)")
    n = 0
    with conn:
        records, labels = [], []
        with path.open("rb") as fh:
            for line in fh:
                row = orjson.loads(line)
                n += 1
                records.append((n, row["id"], line.decode()))
                for k in row["all_relevant_sentence_keys"]:
                    labels.append((n, "relevant", k, "true"))
                for k in row["all_utilized_sentence_keys"]:
                    labels.append((n, "utilized", k, "true"))
                unsupported = set(row["unsupported_response_sentence_keys"])
                for s in row["sentence_support_information"]:
                    k = s["response_sentence_key"]
                    labels.append((n, "supported", k, "false" if k in unsupported else "true"))
                    labels.append(
                        (n, "support_keys", k, orjson.dumps(s["supporting_sentence_keys"]).decode())
                    )
                if len(records) >= 10_000:
                    conn.executemany("INSERT INTO records VALUES (?, ?, ?)", records)
                    conn.executemany("INSERT INTO labels VALUES (?, ?, ?, ?)", labels)
                    records.clear()
                    labels.clear()
        conn.executemany("INSERT INTO records VALUES (?, ?, ?)", records)
        conn.executemany("INSERT INTO labels VALUES (?, ?, ?, ?)", labels)
    conn.close()
    return n


def ragreview_env() -> dict[str, str]:
    """The environment for ``python -m ragreview`` from this checkout. Bytecode is
    written, as an installed package has it: with ``PYTHONDONTWRITEBYTECODE`` set (some
    shells and CI images set it) every run would compile every module again, which a
    user's ragreview never does (+50 ms of start-up)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def ragreview(*args: str | Path) -> None:
    """``python -m ragreview ARGS`` from this checkout, output discarded."""
    subprocess.run(
        [sys.executable, "-m", "ragreview", *map(str, args)],
        check=True,
        env=ragreview_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def setup(
    description: str, one_core: bool = False, records: int = 100_000
) -> tuple[argparse.Namespace, Path]:
    """The bench scripts' options, and the folder their files go in."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--records", type=int, default=records, help="up to 300,000")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (median)")
    parser.add_argument("--keep", type=Path, help="keep the generated file and DBs here")
    if one_core:
        parser.add_argument(
            "--one-core", action="store_true", help="both on core 0 (taskset); peak memory"
        )
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="ragreview-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    return args, folder


def report(
    base_name: str,
    ours_name: str,
    n: int,
    base: list[float],
    ours: list[float],
    target: float = 0.5,
) -> None:
    """Both throughputs (medians) and their ratio against ``target``, with each run's."""
    base_s, ours_s = statistics.median(base), statistics.median(ours)
    runs = f" (median of {len(base)})" if len(base) > 1 else ""
    print(f"{base_name + ':':28s}{base_s:6.1f} s  {n / base_s:9.0f} records/s{runs}")
    print(f"{ours_name + ':':28s}{ours_s:6.1f} s  {n / ours_s:9.0f} records/s{runs}")
    ratios = ", ".join(f"{b / o:.2f}" for b, o in zip(base, ours, strict=True))
    print(f"ratio: {base_s / ours_s:.2f} (target >= {target:.2f}; per run: {ratios})")


def clean_up(folder: Path, keep: Path | None) -> None:
    if keep is None:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


def tree_rss(pid: int) -> int:
    """The resident bytes of process ``pid`` and all its descendants, from /proc."""
    total, pending = 0, [pid]
    while pending:
        p = pending.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            for task in Path(f"/proc/{p}/task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue  # (gone meanwhile)
    return total


def timed(command: list[str]) -> tuple[float, int, float]:
    """Run ``command`` (output discarded): (seconds, peak RSS of its process tree, CPU
    seconds of the process and every child it waited for: a worker's CPU counts)."""
    t = time.perf_counter()
    proc = subprocess.Popen(
        command, env=ragreview_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:  # (never polls: the wait4 below must be the one that reaps)
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss(proc.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, command)
    return elapsed, peak, usage.ru_utime + usage.ru_stime


def one_core(args: argparse.Namespace, data: Path, folder: Path) -> None:
    """Both on core 0, each in a process of its own; ratio and ragreview's peak memory."""
    pin = ["taskset", "-c", "0", sys.executable]
    base_times, ours_times, peaks = [], [], []
    for _ in range(args.repeat):
        for stale in folder.glob("*.db*"):
            stale.unlink()
        base_db, ours_db = folder / "baseline.db", folder / "ragreview.db"
        base_times.append(timed([*pin, __file__, "--floor", str(data), str(base_db)])[0])
        elapsed, peak, _cpu = timed(
            [*pin, "-m", "ragreview", "import", str(data), "--db", str(ours_db)]
        )
        ours_times.append(elapsed)
        peaks.append(peak)
    report("baseline, one core", "ragreview, one core", args.records, base_times, ours_times, 0.7)
    print(f"ragreview peak RSS (main + worker): {max(peaks) / 2**20:.0f} MiB (target <= 250)")


def by_style(args: argparse.Namespace, data: Path, folder: Path) -> tuple[float, float, int]:
    """Floor and ragreview alternated, each in a process of its own: prints both and
    returns (wall ratio floor/ours, CPU ratio ours/floor, ragreview's peak RSS)."""
    floor = [sys.executable, __file__, "--floor"]
    base, ours, base_cpu, ours_cpu, peaks = [], [], [], [], []
    for _ in range(args.repeat):  # alternate the two, so load and cache hit both alike
        for stale in folder.glob("*.db*"):
            stale.unlink()
        elapsed, _peak, cpu = timed([*floor, str(data), str(folder / "baseline.db")])
        base.append(elapsed)
        base_cpu.append(cpu)
        elapsed, peak, cpu = timed(
            [sys.executable, "-m", "ragreview", "import", str(data), "--db", str(folder / "r.db")]
        )
        ours.append(elapsed)
        ours_cpu.append(cpu)
        peaks.append(peak)
    report("baseline (orjson + sqlite)", "ragreview import", args.records, base, ours)
    cpu_ratio = statistics.median(ours_cpu) / statistics.median(base_cpu)
    runs = ", ".join(f"{o / b:.2f}" for o, b in zip(ours_cpu, base_cpu, strict=True))
    print(
        f"CPU, all processes: baseline {statistics.median(base_cpu):.1f} s, ragreview "
        f"{statistics.median(ours_cpu):.1f} s, ratio {cpu_ratio:.2f} (target <= 2; per run: {runs})"
    )
    print(f"ragreview peak RSS (main + worker): {max(peaks) / 2**20:.0f} MiB (target <= 250)")
    return statistics.median(base) / statistics.median(ours), cpu_ratio, max(peaks)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--floor":  # the baseline, in its own process
        baseline(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    args, folder = setup(__doc__.splitlines()[0], one_core=True)
    worst: list[tuple[float, float, int]] = []
    for style in STYLES:
        data = folder / f"ragbench_rows.{style}.jsonl"
        t = time.perf_counter()
        generate(data, args.records, style)
        size = data.stat().st_size / 1e6
        took = time.perf_counter() - t
        print(f"{style}: generated {args.records} rows ({size:.0f} MB) in {took:.1f} s")
        if args.one_core:
            one_core(args, data, folder)
        else:
            worst.append(by_style(args, data, folder))
        data.unlink()
    if worst:
        print(
            f"worst style: wall ratio {min(w[0] for w in worst):.2f} (target >= 0.5), "
            f"CPU ratio {max(w[1] for w in worst):.2f} (target <= 2), "
            f"peak {max(w[2] for w in worst) / 2**20:.0f} MiB (target <= 250)"
        )
    clean_up(folder, args.keep)


if __name__ == "__main__":
    main()
