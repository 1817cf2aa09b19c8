"""A metric variant change against a SQL aggregate over the metric rows, same run.

Generates RAGBench-style rows with ``import_bench``'s generator (default 100,000),
imports them, then times in one process:

* the floor: the SQL aggregate a variant change cannot avoid, every metric row of the
  dataset summed per (layer, name) (what ``metric_writes.rebuild_totals`` runs);
* ``metric_writes.put_setting`` for trace.variant ragbench → length → capped20 →
  ragbench (from the stored stats, SQL);
* for comparison, the record-by-record recompute the change did before (rolled back).

Prints each time and its ratio to the floor; the target is at most 1.5.

    python bench/variant_bench.py [--records N] [--repeat R] [--keep DIR]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

# bench is a package (tests import it): run as a script, its parent must be on the path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.import_bench import REPO, clean_up, generate, ragreview, setup  # noqa: E402

sys.path.insert(0, str(REPO))

from ragreview.store import metric_writes, open_database  # noqa: E402

FLOOR = (
    "SELECT m.layer, m.name, count(m.value), total(m.value), total(m.value * m.value), "
    "count(*) - count(m.value) FROM record_metrics m JOIN records r ON r.rowid = m.record "
    "WHERE r.dataset = ? AND m.layer IN ('judge', 'effective') GROUP BY m.layer, m.name"
)


def timed(func) -> float:
    t = time.perf_counter()
    func()
    return time.perf_counter() - t


def main() -> None:
    args, folder = setup(__doc__.splitlines()[0])
    data, db_path = folder / "variant_rows.jsonl", folder / "variant.ragreview.db"
    generate(data, args.records)
    ragreview("import", data, "--db", db_path)
    db = open_database(db_path)
    dataset = "variant_rows"
    floors, switches = [], {}
    for _ in range(args.repeat):
        for value in ("length", "capped20", "ragbench"):
            floors.append(timed(lambda: db.conn.execute(FLOOR, (dataset,)).fetchall()))
            switches.setdefault(value, []).append(
                timed(lambda v=value: metric_writes.put_setting(db, dataset, "trace.variant", v))
            )
    floor = statistics.median(floors)
    print(f"records: {args.records}")
    print(f"floor (SQL aggregate over record_metrics): {floor:6.2f} s")
    for value, runs in switches.items():
        median = statistics.median(runs)
        print(f"trace.variant → {value:9s} {median:6.2f} s  ratio {median / floor:.2f} (≤ 1.5)")
    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records")]
    db.conn.execute("BEGIN IMMEDIATE")
    full = timed(lambda: metric_writes.refresh(db, rowids, rebuild=True))
    db.conn.rollback()
    print(f"record-by-record recompute (before): {full:6.2f} s  ratio {full / floor:.2f}")
    db.conn.close()
    clean_up(folder, args.keep)


if __name__ == "__main__":
    main()
