"""MT-RAG import cost per MB against a RAGBench import's, measured in the same run (issue 27).

Generates ``--records`` MT-RAG rows in the shape of IBM's sample data
(fixtures/mtrag/responses-10.jsonl: conversation, contexts with passages, targets,
predictions, pandas' NaN columns), each sample row copied with a new task id and a
prediction lengthened with words of its passages (so Rouge-L and extractiveness do
real LCS work), and as many RAGBench rows (``import_bench.make_row``); each file in the
three JSON styles (bench/json_styles.py). Then, ``--repeat`` times, imports every file
with ``python -m ragreview import FILE --db DB`` and takes the CPU seconds of the
command (user + system, all its processes) per MB of input.

Prints, per style, the median MT-RAG and RAGBench CPU s/MB and their ratio (target:
MT-RAG <= 1.5x RAGBench), and the worst style's ratio.

    python bench/mtrag_bench.py [--records N] [--repeat R] [--keep DIR]
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# bench is a package (tests import it): run as a script, its parent must be on the path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import json_styles  # noqa: E402
from bench.import_bench import clean_up, make_row, setup, timed  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "fixtures" / "mtrag" / "responses-10.jsonl"


def mtrag_rows(n: int) -> Iterator[dict[str, Any]]:
    samples = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
    rng = random.Random(27)
    for i in range(n):
        row = json.loads(json.dumps(samples[i % len(samples)]))  # a deep copy, NaN kept
        row["task_id"] = f"{row['conversation_id']}::{i}"
        words = " ".join(c["text"] for c in row["contexts"]).split() or ["no", "passage"]
        start = rng.randrange(len(words))
        extra = words[start : start + rng.randint(40, 120)]
        row["predictions"][0]["text"] += " " + " ".join(extra)
        yield row


def ragbench_rows(n: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(2333)
    for i in range(n):
        yield make_row(i, rng)


def import_cpu(data: Path, db: Path) -> float:
    """CPU seconds (user + system) of ``ragreview import data --db db``, all its processes."""
    for stale in db.parent.glob(db.name + "*"):
        stale.unlink()
    return timed([sys.executable, "-m", "ragreview", "import", str(data), "--db", str(db)])[2]


def main() -> None:
    args, folder = setup(__doc__.splitlines()[0], records=2_000)
    t = time.perf_counter()
    mtrag = json_styles.write_all(folder, "mtrag", lambda: mtrag_rows(args.records))
    ragbench = json_styles.write_all(folder, "ragbench", lambda: ragbench_rows(args.records))
    print(f"generated {args.records} rows of each in 3 styles in {time.perf_counter() - t:.1f} s")
    worst = 0.0
    for style in json_styles.STYLES:
        mb = {
            name: paths[style].stat().st_size / 1e6
            for name, paths in (("m", mtrag), ("r", ragbench))
        }
        m_runs, r_runs = [], []
        for _ in range(args.repeat):  # alternate, so load and cache hit both alike
            m_runs.append(import_cpu(mtrag[style], folder / "mtrag.db") / mb["m"])
            r_runs.append(import_cpu(ragbench[style], folder / "ragbench.db") / mb["r"])
        m, r = statistics.median(m_runs), statistics.median(r_runs)
        worst = max(worst, m / r)
        runs = ", ".join(f"{a / b:.2f}" for a, b in zip(m_runs, r_runs, strict=True))
        print(
            f"{style:7s} MT-RAG {mb['m']:6.1f} MB {m:6.3f} CPU s/MB | RAGBench {mb['r']:6.1f} MB "
            f"{r:6.3f} CPU s/MB | ratio {m / r:.2f} (per run: {runs})"
        )
    print(f"worst ratio MT-RAG / RAGBench per MB: {worst:.2f} (target <= 1.5)")
    clean_up(folder, args.keep)


if __name__ == "__main__":
    main()
