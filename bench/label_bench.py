"""One label override -> record metrics and dataset aggregates updated (docs/architecture.md).

Generates a 100,000-record RAGBench-style dataset (5 documents x 5-12 sentences,
judge labels for relevance, utilization and support), imports it, then times label
changes through ``history.set_label`` (which refreshes the record's metric rows and the
dataset's running sums in the same transaction) followed by ``record_values`` and
``dataset_summary`` (what the TUI reads to show the metrics panel). A bare single-row
UPDATE transaction on the same DB is timed in the same run as the floor set by SQLite's
durable commit. ``--db`` reuses a DB built by an earlier run (no regeneration).

    PYTHONPATH=. python bench/label_bench.py [--records 100000] [--changes 1000] [--db PATH]

Target: <= 20 ms median, <= 50 ms p99.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from ragreview.core.import_items import ImportItem
from ragreview.core.keys import doc_key, response_key
from ragreview.core.record import parse_record
from ragreview.store import (
    history,
    importer,
    metric_reads,
    metric_summary_reads,
    open_database,
    write,
)
from ragreview.store import records as store_records


def generate(n: int, seed: int = 1) -> list[ImportItem]:
    rng = random.Random(seed)
    items = []
    for i in range(n):
        docs, keys = [], []
        for d in range(5):
            sentences = []
            for s in range(rng.randint(5, 12)):
                key = doc_key(d, s)
                keys.append(key)
                sentences.append([key, f"Sentence {s} of document {d} in record {i} " * 2])
            docs.append({"id": f"doc-{i}-{d}", "sentences": sentences})
        response = [[response_key(s), f"Response sentence {s}."] for s in range(rng.randint(1, 5))]
        record = parse_record(
            {
                "id": f"r{i}",
                "task": "trace",
                "question": f"Question {i}?",
                "documents": docs,
                "response": response,
                "scores": {"stored.relevance_score": rng.random()},
            }
        )
        relevant = rng.sample(keys, rng.randint(0, 8))
        judge = {
            "relevant": {k: True for k in relevant},
            "utilized": {k: True for k in relevant[: len(relevant) // 2]},
            "supported": {k: rng.random() < 0.8 for k, _ in response},
        }
        items.append(ImportItem(i + 1, record, judge))
    return items


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--db", type=Path)
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory()
    path = args.db or Path(tmp.name) / "bench.ragreview.db"
    db = open_database(path)
    if not store_records.datasets(db):
        t0 = time.perf_counter()
        items = generate(args.records)
        t1 = time.perf_counter()
        importer.import_records(db, "bench", "ragreview", None, items)
        t2 = time.perf_counter()
        print(f"generated {args.records} records in {t1 - t0:.1f}s, imported in {t2 - t1:.1f}s")
        del items
    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records WHERE dataset = 'bench'")]
    rng = random.Random(2)

    label_ms, summary_ms, baseline_ms = [], [], []
    for i in range(args.changes):
        rowid = rng.choice(rowids)
        stored = store_records.get(db, rowid)
        key = rng.choice([k for k, _ in stored.record.doc_sentences])
        current = stored.human.get("relevant", {}).get(
            key, stored.judge.get("relevant", {}).get(key)
        )
        t0 = time.perf_counter()
        history.set_label(db, rowid, "relevant", key, not current, "bench")
        t1 = time.perf_counter()
        metric_reads.record_values(db, rowid)
        metric_summary_reads.dataset_summary(db, "bench")
        t2 = time.perf_counter()
        label_ms.append((t1 - t0) * 1000)
        summary_ms.append((t2 - t1) * 1000)
        t3 = time.perf_counter()
        with write(db.conn) as conn:
            conn.execute("UPDATE records SET note = ? WHERE rowid = ?", (f"n{i}", rowid))
        baseline_ms.append((time.perf_counter() - t3) * 1000)

    total = [a + b for a, b in zip(label_ms, summary_ms)]
    base = statistics.median(baseline_ms)
    for name, values in (
        ("set_label (event + record metrics + sums)", label_ms),
        ("record_values + dataset_summary (reads)", summary_ms),
        ("label change + summary", total),
        ("baseline: bare 1-row UPDATE txn", baseline_ms),
    ):
        print(
            f"{name:44} median {statistics.median(values):6.2f} ms  "
            f"p99 {percentile(values, 99):6.2f} ms  max {max(values):6.2f} ms"
        )
    print(
        f"label change + summary vs baseline: {statistics.median(total) / base:.1f}x median; "
        f"target <= 20 ms median, <= 50 ms p99 over {args.changes} changes, "
        f"{len(rowids)} records"
    )
    check = metric_summary_reads.dataset_summary(db, "bench")
    print(
        f"summary: {check['records']} records; effective trace.relevance "
        f"{check['effective'].get('trace.relevance')}"
    )


if __name__ == "__main__":
    main()
