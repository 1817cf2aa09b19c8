"""Re-import of an unchanged file against a fresh import of it, measured in the same run.

Generates the RAGBench-style file of ``import_bench.py`` (default 100,000 rows) in each
of the three JSON styles (bench/json_styles.py; the worst counts), then, per style,
``--repeat`` times: ``python -m ragreview import FILE --db DB`` into a new DB (the fresh
import), the same command again (the re-import: every line unchanged), and the floor of
the issue, hashing every line of the file. Prints the medians and the ratio re-import /
fresh import (target <= 0.25), with the hashing floor beside it.

    python bench/reimport_bench.py [--records N] [--repeat R] [--keep DIR]
"""

from __future__ import annotations

import hashlib
import statistics
import sys
import time
from pathlib import Path

# bench is a package (tests import it): run as a script, its parent must be on the path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.import_bench import STYLES, clean_up, generate, ragreview, setup  # noqa: E402


def hash_lines(path: Path) -> int:
    """The floor: read the file and hash each line."""
    n = 0
    with path.open("rb") as fh:
        for line in fh:
            hashlib.sha1(line.rstrip(b"\r\n")).digest()
            n += 1
    return n


def by_style(args, folder: Path, style: str) -> float:
    """One style's runs: prints its medians, returns its ratio re-import / fresh."""
    data = folder / f"ragbench_rows.{style}.jsonl"
    generate(data, args.records, style)
    print(f"{style}: generated {args.records} rows ({data.stat().st_size / 1e6:.0f} MB)")
    fresh, again, floor = [], [], []
    for _ in range(args.repeat):
        db = folder / "ragreview.db"
        for stale in folder.glob("ragreview.db*"):
            stale.unlink()
        t = time.perf_counter()
        ragreview("import", data, "--db", db)
        fresh.append(time.perf_counter() - t)
        t = time.perf_counter()
        ragreview("import", data, "--db", db)
        again.append(time.perf_counter() - t)
        t = time.perf_counter()
        hash_lines(data)
        floor.append(time.perf_counter() - t)
    data.unlink()
    f, a, h = (statistics.median(x) for x in (fresh, again, floor))
    runs = f" (median of {args.repeat})" if args.repeat > 1 else ""
    print(f"  {'fresh import:':28s}{f:6.1f} s{runs}")
    print(f"  {'re-import, unchanged:':28s}{a:6.1f} s")
    print(f"  {'floor (hash every line):':28s}{h:6.1f} s")
    per_run = ", ".join(f"{x / y:.2f}" for x, y in zip(again, fresh, strict=True))
    print(f"  ratio re-import / fresh: {a / f:.2f} (target <= 0.25; per run: {per_run})")
    print(f"  ratio re-import / floor: {a / h:.1f}")
    return a / f


def main() -> None:
    args, folder = setup(__doc__.splitlines()[0])
    worst = max(by_style(args, folder, style) for style in STYLES)
    print(f"worst style: ratio re-import / fresh {worst:.2f} (target <= 0.25)")
    clean_up(folder, args.keep)


if __name__ == "__main__":
    main()
