"""What any import must spend to store what ragreview stores, beside issue 27's two
import targets (import CPU <= 2x the floor; MT-RAG CPU per MB <= 1.5x RAGBench's).

Generates ``--records`` RAGBench bench rows (``import_bench.make_row``, as ``mtrag_bench`` draws them) and as many
MT-RAG rows (``mtrag_bench.mtrag_rows``) in one JSON style, imports each with
``python -m ragreview import`` (CPU of all its processes, less a one-row import's: the
fixed cost), then times in this process, alternately, ``--repeat`` times:

* the floor, ``import_bench.baseline`` (RAGBench only: it cannot parse MT-RAG's NaN);
* the storage lower bound: per line a parse, one ``orjson.dumps`` of the parsed row
  (standing for the data text), zstd at the level the family packs at and two SHA-1s
  (line, data); then ragreview's own rows for the file (records, judge labels, per-record
  metrics, signals, totals; read from its DB beforehand, not timed) inserted into a
  fresh DB with the same schema and the same build pragmas as ``store.db.building``.
  Nothing ragreview computes (sentences, labels, metrics, signals) is paid for;
* for MT-RAG, its text work at the speed of ragreview's own code: Punkt on the
  prediction (not cached; passages through the cache, as an import does) and
  ``core.metrics.mtrag.text_scores``.

Prints per-record microseconds and where each target falls between them.

    python bench/import_lower_bound.py [--records N] [--repeat R] [--style S] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import zstandard

# bench is a package (tests import it): run as a script, its parent must be on the path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import json_styles  # noqa: E402
from bench.import_bench import baseline, timed  # noqa: E402
from bench.mtrag_bench import mtrag_rows, ragbench_rows  # noqa: E402
from ragreview.core.families import task_family  # noqa: E402
from ragreview.core.metrics.mtrag import text_scores  # noqa: E402
from ragreview.formats import sentencizer  # noqa: E402
from ragreview.store import db as store_db  # noqa: E402
from ragreview.store import source_blob  # noqa: E402

TABLES = ("records", "judge_labels", "record_metrics", "record_signals", "metric_totals")


def stored_rows(db: Path) -> tuple[list[str], dict[str, list[tuple]]]:
    """The schema of ragreview's DB and its rows of ``TABLES``, each in rowid order."""
    with sqlite3.connect(db) as conn:
        schema = [
            sql
            for (sql,) in conn.execute(
                "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
                "AND name NOT LIKE 'sqlite_%' ORDER BY type = 'index', rowid"
            )
        ]
        rows = {t: conn.execute(f"SELECT * FROM {t}").fetchall() for t in TABLES}
    return schema, rows


def storage_bound(
    path: Path, db: Path, schema: list[str], rows: dict[str, list[tuple]], task: str
) -> int:
    """Parse, pack (at the level ``task``'s family packs at), hash and insert
    ragreview's rows for ``path``: the storage bound."""
    per_record: dict[str, dict[int, list[tuple]]] = {t: {} for t in TABLES[1:4]}
    for table, by_record in per_record.items():
        for row in rows[table]:
            by_record.setdefault(row[0], []).append(row)  # (``record`` is column 0)
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA page_size={store_db.PAGE_SIZE}")
    conn.execute("PRAGMA journal_mode=MEMORY")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA locking_mode=EXCLUSIVE")
    conn.execute(f"PRAGMA cache_size=-{store_db.BUILD_CACHE_KIB}")
    for sql in schema:
        conn.execute(sql)
    insert = {
        t: f"INSERT INTO {t} VALUES ({','.join('?' * len(rows[t][0]))})" for t in TABLES if rows[t]
    }
    family = task_family(task)
    level = family.source_level if family is not None else None
    pack = zstandard.ZstdCompressor(level=source_blob.LEVEL if level is None else level)
    batch: dict[str, list[tuple]] = {t: [] for t in TABLES[:4]}
    n = 0
    with conn, path.open("rb") as fh:
        for line in fh:
            line = line.rstrip(b"\n")
            if not line:
                continue
            parsed = orjson.loads(line.replace(b"NaN", b"null") if b"NaN" in line else line)
            data = orjson.dumps(parsed)
            pack.compress(line)
            hashlib.sha1(line).digest()
            hashlib.sha1(data).hexdigest()
            record = rows["records"][n]
            n += 1
            batch["records"].append(record)
            for table, by_record in per_record.items():
                batch[table].extend(by_record.get(record[0], ()))
            if len(batch["records"]) >= 500:
                for table, values in batch.items():
                    if values:
                        conn.executemany(insert[table], values)
                    values.clear()
        for table, values in batch.items():
            if values:
                conn.executemany(insert[table], values)
        if rows["metric_totals"]:
            conn.executemany(insert["metric_totals"], rows["metric_totals"])
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    return n


def mtrag_text_work(path: Path) -> Callable[[], object]:
    """Punkt on each prediction and ``text_scores``, as an MT-RAG import runs them (the
    lines parsed and Punkt loaded beforehand: the storage bound parses, and loading is
    part of the fixed cost)."""
    texts = []
    for line in path.open("rb"):
        row = orjson.loads(line.replace(b"NaN", b"null"))
        targets = [t["text"] for t in row.get("targets") or []]
        passages = [c["text"] for c in row.get("contexts") or []]
        texts.append((row["predictions"][0]["text"], targets[0] if targets else None, passages))
    unwrapped = sentencizer._spans.__wrapped__  # (a prediction is split once per import)
    unwrapped(texts[0][0])
    text_scores(*texts[0])

    def work() -> None:
        for prediction, target, passages in texts:
            unwrapped(prediction)
            for passage in passages:
                sentencizer.spans(passage)
            text_scores(prediction, target, passages)

    return work


def cpu(work: Callable[..., object], *args: object) -> float:
    """CPU seconds of ``work(*args)`` in this process."""
    t = time.process_time()
    work(*args)
    return time.process_time() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--style", choices=json_styles.STYLES, default="json")
    parser.add_argument("--keep", type=Path, help="keep the generated files and DBs here")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="ragreview-bound-"))
    folder.mkdir(parents=True, exist_ok=True)
    n = args.records
    files, ours, fixed, mb = {}, {}, {}, {}
    for name, make in (("ragbench", ragbench_rows), ("mtrag", mtrag_rows)):
        files[name] = folder / f"{name}.jsonl"
        json_styles.write(files[name], make(n), args.style)
        one = folder / f"{name}-1.jsonl"
        one.write_bytes(files[name].read_bytes().split(b"\n", 1)[0] + b"\n")
        mb[name] = files[name].stat().st_size / 1e6
        runs, fixed_runs = [], []
        for k in range(args.repeat):
            for db in folder.glob(f"{name}*.db*"):
                db.unlink()
            command = [sys.executable, "-m", "ragreview", "import"]
            runs.append(timed([*command, str(files[name]), "--db", str(folder / f"{name}.db")])[2])
            fixed_runs.append(timed([*command, str(one), "--db", str(folder / f"{name}-1.db")])[2])
            if k < args.repeat - 1:
                (folder / f"{name}.db").unlink()
        ours[name], fixed[name] = statistics.median(runs), statistics.median(fixed_runs)
    stored = {name: stored_rows(folder / f"{name}.db") for name in files}
    times: dict[str, list[float]] = {"floor": [], "ragbench": [], "mtrag": [], "text": []}
    text_work = mtrag_text_work(files["mtrag"])
    for _ in range(args.repeat):  # alternated, so that load falls on each alike
        for name in ("floor", "ragbench", "mtrag"):
            target = folder / f"bound-{name}.db"
            for stale in folder.glob(target.name + "*"):
                stale.unlink()
            if name == "floor":
                times[name].append(cpu(baseline, files["ragbench"], target))
            else:
                task = "trace" if name == "ragbench" else name
                times[name].append(cpu(storage_bound, files[name], target, *stored[name], task))
        times["text"].append(cpu(text_work))
    us = {k: statistics.median(v) / n * 1e6 for k, v in times.items()}
    per = {name: (ours[name] - fixed[name]) / n * 1e6 for name in files}
    floor = us["floor"]
    print(
        f"{n} rows of each, {args.style} style; CPU microseconds per record (medians of {args.repeat})"
    )
    print(
        f"RAGBench: floor {floor:.0f}, storage bound {us['ragbench']:.0f} "
        f"({us['ragbench'] / floor:.2f}x the floor), ragreview {per['ragbench']:.0f} "
        f"({per['ragbench'] / floor:.2f}x; fixed {fixed['ragbench']:.2f} s). The 2x target "
        f"leaves {2 * floor - us['ragbench']:.0f} us for all that ragreview computes a record."
    )
    # the MT-RAG row: its CPU per MB (fixed cost included) against 1.5x RAGBench's
    allowed = 1.5 * ours["ragbench"] / mb["ragbench"] * mb["mtrag"]
    budget = (allowed - fixed["mtrag"]) / n * 1e6
    bound = us["mtrag"] + us["text"]
    print(
        f"MT-RAG: storage bound {us['mtrag']:.0f} + Punkt and text metrics {us['text']:.0f} "
        f"= {bound:.0f}; ragreview {per['mtrag']:.0f} (fixed {fixed['mtrag']:.2f} s); "
        f"1.5x RAGBench's CPU per MB allows {budget:.0f} (target: bound <= allowed)"
    )
    if args.keep is None:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()


if __name__ == "__main__":
    main()
