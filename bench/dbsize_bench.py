"""Review DB size against the input's, and against the floor DB, made in the same run,
for input in each JSON style people write (the worst is the figure that counts).

Generates the RAGBench-style file of ``import_bench.py`` (default 100,000 rows) in
each of ``import_bench.STYLES`` (orjson, ``json.dumps`` defaults, pandas
``to_json(lines=True)``), imports it with ``python -m ragreview import FILE --db DB``
and builds the floor DB of ``import_bench.baseline`` (the raw lines and one row per
judge label). Prints each DB's size / the input's size (target for ragreview: <= 1.25
for every style) and ragreview's / the floor's.

    python bench/dbsize_bench.py [--records N] [--keep DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench is a package (tests import it): run as a script, its parent must be on the path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.import_bench import STYLES, baseline, clean_up, generate, ragreview, setup  # noqa: E402


def size(db: Path) -> int:
    """The DB's bytes on disk, its WAL included."""
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def main() -> None:
    args, folder = setup(__doc__.splitlines()[0])
    worst = 0.0
    for style in STYLES:
        data = folder / f"ragbench_rows.{style}.jsonl"
        generate(data, args.records, style)
        given = data.stat().st_size
        for stale in folder.glob("*.db*"):
            stale.unlink()
        ours, floor = folder / "ragreview.db", folder / "baseline.db"
        ragreview("import", data, "--db", ours)
        baseline(data, floor)
        ratio = size(ours) / given
        worst = max(worst, ratio)
        print(f"{style}: {args.records} rows, {given / 1e6:.0f} MB")
        print(f"  {'ragreview DB / input:':28s}{ratio:6.2f} (target <= 1.25)")
        print(f"  {'floor DB / input:':28s}{size(floor) / given:6.2f} (raw lines + label rows)")
        print(f"  {'ratio ragreview / floor:':28s}{size(ours) / size(floor):6.2f}")
        data.unlink()
    print(f"worst style: ragreview DB / input {worst:.2f} (target <= 1.25)")
    clean_up(folder, args.keep)


if __name__ == "__main__":
    main()
