"""What ``queue --strategy runs-disagree`` and ``uncertainty`` without log-probabilities
score a record by, stored per record (``record_run_signals``, migration m016): the
largest entropy of an item's values across the judge runs, and the share of its items
on which runs disagree (``core.queue_signals.run_entropy``, ``run_layers.disagreements``).

Both depend on the record's ``run_labels`` alone, so a row is rewritten where those are
written for one record (``judge_store.save_result``) and dropped where they are written
in bulk (``run_layers.keep_import`` and ``store_import``, an import's run labels); a
draw computes the rows that are absent (``read``). Reading every run label of a dataset
and parsing each value took 10 s of CPU at 30,000 records with two runs (issue 27).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core import queue_signals
from . import run_layers

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

_PACK = struct.Struct("<dd")  # (entropy, share), little-endian doubles


def compute(db: sqlite_utils.Database, rowids: Sequence[int]) -> list[tuple[int, float, float]]:
    """(rowid, entropy, disagreeing share) of these records from their run labels, each
    computed as the per-dataset code computed it (values in the order the dataset's
    read gave them: by run, label, target), so the scores are bit for bit its."""
    out: list[tuple[int, float, float]] = []
    for start in range(0, len(rowids), 500):
        chunk = list(rowids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        items: dict[int, dict[tuple[str, str], list[str]]] = {r: {} for r in chunk}
        runs: dict[int, set[str]] = {r: set() for r in chunk}
        for record, run, name, target, value in db.conn.execute(
            f"SELECT record, run, name, target, value FROM run_labels WHERE record IN ({marks}) "
            "ORDER BY record, run, name, target",
            chunk,
        ):
            items[record].setdefault((name, target), []).append(value)
            runs[record].add(run)
        # both ways runs can disagree need two of them on the record
        several = [r for r in chunk if len(runs[r]) > 1]
        split: set[int] = set()
        if several:
            marks = ",".join("?" * len(several))
            split = {
                r
                for (r,) in db.conn.execute(
                    f"SELECT r.rowid FROM records r WHERE r.rowid IN ({marks}) "
                    f"AND {run_layers.runs_disagree_sql()}",
                    several,
                )
            }
        for rowid in chunk:
            share = 0.0
            if rowid in split:
                share = len(run_layers.disagreements(db, rowid)) / max(1, len(items[rowid]))
            out.append((rowid, queue_signals.run_entropy(_canonical(items[rowid])), share))
    return out


def _canonical(
    items: dict[tuple[str, str], list[str]],
) -> dict[tuple[str, str], list[str]]:
    """The values as canonical JSON, as the entropy compares them; an item whose runs
    stored the same text keeps it (the same text has the same canonical form, and the
    entropy only counts equal values), so only differing ones are parsed."""
    return {
        item: values
        if len(set(values)) == 1
        else [json.dumps(json.loads(v), sort_keys=True) for v in values]
        for item, values in items.items()
    }


def put(db: sqlite_utils.Database, rowids: Sequence[int]) -> None:
    """Recompute and store these records' run signals (caller's transaction)."""
    db.conn.executemany(
        "INSERT INTO record_run_signals (record, packed) VALUES (?, ?) "
        "ON CONFLICT (record) DO UPDATE SET packed = excluded.packed",
        [(r, _PACK.pack(entropy, share)) for r, entropy, share in compute(db, rowids)],
    )


def read(db: sqlite_utils.Database, dataset: str, rowids: list[int]) -> tuple[Any, Any]:
    """(entropy, share) as float64 arrays in ``rowids`` order (the dataset's records),
    the absent rows computed and stored first."""
    import numpy as np

    from .db import write

    sql = (
        "SELECT count(*), group_concat(r.rowid), count(q.record), "
        "CAST(group_concat(q.packed, '') AS BLOB) FROM records r "
        "LEFT JOIN record_run_signals q ON q.record = r.rowid WHERE r.dataset = ?"
    )
    n, listed, present, blob = db.conn.execute(sql, (dataset,)).fetchone()
    if present < n:
        missing = [
            r
            for (r,) in db.conn.execute(
                "SELECT r.rowid FROM records r LEFT JOIN record_run_signals q "
                "ON q.record = r.rowid WHERE r.dataset = ? AND q.record IS NULL",
                (dataset,),
            )
        ]
        with write(db.conn):
            put(db, missing)
        n, listed, present, blob = db.conn.execute(sql, (dataset,)).fetchone()
    values = np.frombuffer(blob or b"", dtype="<f8").reshape(-1, 2)
    order = np.fromstring(listed or "", dtype=np.int64, sep=",") if n else np.zeros(0, np.int64)
    if present != n or len(values) != n or len(order) != n:
        raise ValueError(f"record_run_signals of {dataset!r}: not one row per record")
    # (a record added since ``rowids`` were read has no runs' labels beyond the import's)
    by_rowid = dict(zip(order.tolist(), range(n)))
    index = np.array([by_rowid.get(r, n) for r in rowids], dtype=np.intp)
    values = np.vstack([values, np.zeros((1, 2))])
    return values[index, 0], values[index, 1]
