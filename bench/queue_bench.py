"""``ragreview queue --n 200`` against reading the ids and drawing, in the same run
(issue 27: <= 1 s at 300,000 records).

Builds (once, cached in bench/.cache, or ``--db``) a RAGBench-style DB of ``--records``
records with tui_bench's generator, straight into the store: the queue reads the stored
records and metric rows, never the input file, so no JSON style is involved. Then
``--repeat`` times, interleaved: the floor (a fresh interpreter that reads the dataset's
record ids in order and draws 200 with ``random.Random(seed).sample``) and ``python -m
ragreview queue DB --n 200 --strategy S --seed K`` for S in ``--strategies`` (random
and impact; stored-mismatch needs a DB with stored scores, which the generated one has
not). Prints each one's median wall seconds and CPU seconds and the ratio to the floor.

    python bench/queue_bench.py [--records N] [--repeat R] [--db PATH] [--strategies S,S]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

# bench is a package (tests import it): run as a script, its parent must be on the path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.import_bench import ragreview_env, timed  # noqa: E402

HERE = Path(__file__).resolve().parent
FLOOR = """
import random, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
ids = [r for (r,) in conn.execute(
    "SELECT rowid FROM records WHERE dataset = 'bench' ORDER BY position, rowid")]
print(len(random.Random(int(sys.argv[2])).sample(ids, 200)))
"""


def measured(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of ``command`` in a fresh process."""
    wall, _peak, cpu = timed(command)
    return wall, cpu


def _queue(py: str, db: Path, strategy: str) -> Callable[[int], list[str]]:
    """``ragreview queue DB --n 200 --strategy STRATEGY --seed SEED``, given the seed."""
    return lambda seed: [
        py, "-m", "ragreview", "queue", str(db), "--n", "200", "--strategy", strategy,
        "--seed", str(seed),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000, help="up to 300,000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--db", type=Path)
    parser.add_argument("--strategies", default="random,impact")
    args = parser.parse_args()
    db = args.db or HERE / ".cache" / f"tui-{args.records}.ragreview.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    if not db.exists():
        tui_bench = str(HERE / "tui_bench.py")
        subprocess.run([sys.executable, tui_bench, "--child", "build", str(db), str(args.records)],
                       check=True, env=ragreview_env())  # fmt: skip
    py = sys.executable
    commands = {
        "floor": lambda seed: [py, "-c", FLOOR, str(db), str(seed)],
        **{strategy: _queue(py, db, strategy) for strategy in args.strategies.split(",")},
    }
    # Warm the page cache, and do an older DB's one-time upgrades (its migrations, its
    # missing metric rows, and the per-record signals impact reads: store.record_signals;
    # an import by this build writes them), each shown but not counted.
    for name in args.strategies.split(","):
        wall, cpu = measured(commands[name](0))
        print(f"first {name}: {wall:.2f} s wall {cpu:.2f} s CPU (warm-up, not counted)")
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for seed in range(args.repeat):
        for name, command in commands.items():
            runs[name].append(measured(command(seed)))
    floor_wall = statistics.median(w for w, _ in runs["floor"])
    print(f"records: {args.records:,}  db: {db}")
    for name, values in runs.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        each = ", ".join(f"{w:.2f}" for w, _ in values)
        print(
            f"{name:15s} {wall:6.2f} s wall  {cpu:6.2f} s CPU  {wall / floor_wall:5.1f}x floor "
            f"(runs: {each})" + ("  target <= 1 s" if name != "floor" else "")
        )


if __name__ == "__main__":
    main()
