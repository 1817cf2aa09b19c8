"""Start-up cost of one ``ragreview label`` / ``mark`` call against the floor of the same
run: ``python -c "import click, sqlite3, orjson"`` (issue 27: target <= 0.2 s CPU).

Generates ``--records`` native records (one document, a two-sentence response, judge
labels) in the three JSON styles (bench/json_styles.py), imports each once, then
``--repeat`` times runs on each DB one ``label`` and one ``mark --reviewed`` call and the
floor, each in a fresh interpreter, and takes its CPU seconds (user + system). Prints
per command the median, the floor's median, their difference and ratio, worst style.

    python bench/startup_bench.py [--records N] [--repeat R] [--keep DIR]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# bench is a package (tests import it): run as a script, its parent must be on the path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import json_styles  # noqa: E402
from bench.import_bench import clean_up, ragreview_env, setup, timed  # noqa: E402


def rows(n: int) -> Iterator[dict[str, Any]]:
    for i in range(n):
        yield {
            "id": f"r{i}",
            "task": "trace",
            "question": f"Question {i} about a/b?",
            "documents": [{"sentences": [["0a", "One fact."], ["0b", "Another fact."]]}],
            "response": [["a", "An answer."], ["b", "More of it."]],
            "labels": {"judge": {"relevant": {"0a": True}, "supported": {"a": True, "b": False}}},
        }


def cpu(command: list[str]) -> float:
    """CPU seconds (user + system) of ``command`` in a fresh process."""
    return timed(command)[2]


def main() -> None:
    args, folder = setup(__doc__.splitlines()[0], records=1_000)
    paths = json_styles.write_all(folder, "startup", lambda: rows(args.records))
    ragreview = [sys.executable, "-m", "ragreview"]
    floor_cmd = [sys.executable, "-c", "import click, sqlite3, orjson"]
    worst: dict[str, tuple[float, float]] = {}
    for style, path in paths.items():
        subprocess.run([*ragreview, "import", str(path)], check=True, env=ragreview_env(),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        db = str(path.with_name(path.stem + ".ragreview.db"))
        commands = {
            "label": [*ragreview, "label", db, "r1", "supported", "a", "false", "--reviewer", "b"],
            "mark": [*ragreview, "mark", db, "r1", "--reviewed", "--reviewer", "b"],
        }
        runs: dict[str, list[float]] = {"floor": [], **{name: [] for name in commands}}
        for _ in range(args.repeat):  # interleaved, so load hits all alike
            runs["floor"].append(cpu(floor_cmd))
            for name, command in commands.items():
                runs[name].append(cpu(command))
        floor = statistics.median(runs["floor"])
        for name in commands:
            median = statistics.median(runs[name])
            print(
                f"{style:7s} {name:6s} {median:5.3f} s CPU  floor {floor:5.3f} s  "
                f"above floor {median - floor:5.3f} s  ratio {median / floor:4.1f}  "
                f"(runs: {', '.join(f'{r:.3f}' for r in runs[name])})"
            )
            if name not in worst or median - floor > worst[name][0] - worst[name][1]:
                worst[name] = (median, floor)
    for name, (median, floor) in worst.items():
        print(f"worst {name}: {median:.3f} s CPU (target <= 0.2), floor {floor:.3f} s")
    clean_up(folder, args.keep)


if __name__ == "__main__":
    main()
