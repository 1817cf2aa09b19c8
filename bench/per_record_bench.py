"""``metrics --per-record --json`` against a bare SELECT + orjson dump, same run.

Generates RAGBench-style rows with ``import_bench``'s generator (default 100,000) in each
of the three JSON styles (bench/json_styles.py; the worst counts), one DB each,
imports them, then times:

* the floor, in this process: the same query's rows fetched (``SELECT`` of every
  public judge/effective metric row in file order) and dumped with orjson;
* ``python -m ragreview metrics FILE --db DB --per-record --json`` in a subprocess
  (the whole command, start-up included), output to /dev/null.

Prints both (medians over ``--repeat``), the ratio, and the command's time against its
target of 1 s at 100,000 records.

    python bench/per_record_bench.py [--records N] [--repeat R] [--keep DIR]
"""

from __future__ import annotations

import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson

# bench is a package (tests import it): run as a script, its parent must be on the path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.import_bench import (  # noqa: E402
    STYLES,
    clean_up,
    generate,
    ragreview,
    ragreview_env,
    setup,
)

QUERY = (
    "SELECT r.rowid, r.id, m.layer, m.name, m.value FROM records r "
    "LEFT JOIN record_metrics m ON m.record = r.rowid "
    "AND m.layer IN ('judge', 'effective') AND instr(m.name, '._') = 0 "
    "WHERE r.dataset = ? ORDER BY r.position, r.rowid, m.layer, m.name"
)


def by_style(args, folder: Path, style: str) -> float:
    """One style's runs (a DB of its own): prints them, returns ragreview's median."""
    data = folder / f"per_record_{style}.jsonl"
    db_path = folder / f"per_record_{style}.ragreview.db"
    generate(data, args.records, style)
    ragreview("import", data, "--db", db_path)
    ragreview("metrics", data, "--db", db_path, "--json")  # upgrade/ensure outside timing
    command = [sys.executable, "-m", "ragreview", "metrics", str(data), "--db", str(db_path)]
    command += ["--per-record", "--json"]
    floors, ours = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        conn = sqlite3.connect(db_path)
        rows = conn.execute(QUERY, (data.stem,)).fetchall()
        with open("/dev/null", "wb") as out:
            out.write(orjson.dumps(rows))
        conn.close()
        floors.append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run(command, check=True, env=ragreview_env(), stdout=subprocess.DEVNULL)
        ours.append(time.perf_counter() - t)
    floor, median = statistics.median(floors), statistics.median(ours)
    print(f"{style}: records: {args.records}")
    print(f"  floor (SELECT + orjson dump): {floor:6.2f} s")
    print(f"  metrics --per-record --json:  {median:6.2f} s  (target ≤ 1 s at 100,000)")
    print(f"  ratio: {median / floor:.2f}")
    return median


def main() -> None:
    args, folder = setup(__doc__.splitlines()[0])
    worst = max(by_style(args, folder, style) for style in STYLES)
    print(f"worst style: metrics --per-record --json {worst:.2f} s (target ≤ 1 s at 100,000)")
    clean_up(folder, args.keep)


if __name__ == "__main__":
    main()
