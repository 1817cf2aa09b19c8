"""Review queues (``ragreview queue``): weighted, seeded draws of records to review with
each record's inclusion probability recorded (docs/estimate.md).

A strategy scores every record of the dataset from signals that exist before any human
looks; ``core.sampling`` turns the scores (mixed with a uniform share, so every record
can be drawn) into a Poisson draw of expected size n, in draw order. Already reviewed
records can be drawn too: the draw is of the whole dataset, or the estimate could not
weight it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

from ..core import queue_signals, sampling
from ..core.errors import RagreviewError
from . import run_layers
from .db import write
from .records import now

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

STRATEGIES = ("random", "uncertainty", "impact", "runs-disagree", "stored-mismatch")


@dataclass(frozen=True)
class Member:
    record: int  # rowid
    position: int  # draw order, from 0
    weight: float
    key: float
    inclusion: float  # π


@dataclass(frozen=True)
class Draw:
    id: int
    dataset: str
    strategy: str
    n: int
    seed: int
    uniform_share: float
    threshold: float  # τ; inf when every record was drawn
    population: int
    at: str
    members: tuple[Member, ...]  # in draw order


def _rowids(db: sqlite_utils.Database, dataset: str) -> list[int]:
    sql = "SELECT rowid FROM records WHERE dataset = ? ORDER BY position, rowid"
    return list(chain.from_iterable(db.conn.execute(sql, (dataset,)).fetchall()))


# Public metric names only: "._" marks the internal sums (store.metric_rows).
_PUBLIC = "instr(m.name, '._') = 0"


def _impact_scores(db: sqlite_utils.Database, dataset: str) -> dict[int, float]:
    """``queue_signals.impact`` in one SQL pass over the judge layer (docs/estimate.md):
    per record, the most its labels could move an item-weighted dataset mean."""
    sql = f"""
        WITH sizes AS (
            SELECT l.record, count(*) AS n FROM judge_labels l
            JOIN records r ON r.rowid = l.record WHERE r.dataset = :d GROUP BY l.record
        ),
        defined AS (
            SELECT m.record, m.name, m.value, max(1, coalesce(s.n, 0)) AS size
            FROM record_metrics m JOIN records r ON r.rowid = m.record
            LEFT JOIN sizes s ON s.record = m.record
            WHERE r.dataset = :d AND m.layer = 'judge' AND m.value IS NOT NULL AND {_PUBLIC}
        ),
        bounded AS (
            SELECT name, sum(size) AS total FROM defined
            GROUP BY name HAVING min(value) >= 0 AND max(value) <= 1
        )
        SELECT d.record, max(d.size * max(d.value, 1 - d.value) / b.total)
        FROM defined d JOIN bounded b ON b.name = d.name GROUP BY d.record
    """
    return dict(db.conn.execute(sql, {"d": dataset}).fetchall())


def _mismatch_scores(db: sqlite_utils.Database, dataset: str) -> dict[int, float] | None:
    """``queue_signals.mismatch`` in SQL: Σ |stored − judge| per record over the metrics
    that have both; None when no record has a stored value."""
    if not db.conn.execute(
        "SELECT 1 FROM record_metrics m JOIN records r ON r.rowid = m.record "
        f"WHERE r.dataset = ? AND m.layer = 'stored' AND {_PUBLIC} LIMIT 1",
        (dataset,),
    ).fetchone():
        return None
    sql = f"""
        SELECT m.record, total(abs(m.value - j.value)) FROM record_metrics m
        JOIN records r ON r.rowid = m.record
        JOIN record_metrics j ON j.record = m.record AND j.layer = 'judge' AND j.name = m.name
        WHERE r.dataset = ? AND m.layer = 'stored' AND {_PUBLIC}
          AND m.value IS NOT NULL AND j.value IS NOT NULL
        GROUP BY m.record
    """
    return dict(db.conn.execute(sql, (dataset,)).fetchall())


def _run_rows(db: sqlite_utils.Database, dataset: str) -> list[tuple[int, str, str, str, Any, Any]]:
    """Every judge run's labels (docs/agreement.md, Judge runs); none while the import
    is the dataset's only run (its labels are then judge_labels alone)."""
    return list(
        db.conn.execute(
            "SELECT l.record, l.run, l.name, l.target, l.value, l.logprob FROM run_labels l "
            "JOIN records r ON r.rowid = l.record WHERE r.dataset = ?",
            (dataset,),
        )
    )


def _items_across_runs(rows: Sequence[tuple]) -> dict[int, dict[tuple[str, str], list[str]]]:
    """Per record, per (label, target), the value each run gave (as canonical JSON)."""
    out: dict[int, dict[tuple[str, str], list[str]]] = {}
    for record, _run, name, target, value, _lp in rows:
        canonical = json.dumps(json.loads(value), sort_keys=True)
        out.setdefault(record, {}).setdefault((name, target), []).append(canonical)
    return out


def scores(
    db: sqlite_utils.Database, dataset: str, strategy: str, rowids: list[int]
) -> list[float]:
    """One score per record (in ``rowids`` order); raises when the signal is missing."""
    if strategy == "random":
        return [1.0] * len(rowids)
    if strategy == "impact":
        impact = _impact_scores(db, dataset)
        return [impact.get(r, 0.0) for r in rowids]
    if strategy == "stored-mismatch":
        mismatch = _mismatch_scores(db, dataset)
        if mismatch is None:
            raise RagreviewError(
                f"no record of dataset {dataset!r} has a stored score to compare with its "
                "recomputed one: --strategy stored-mismatch has nothing to go on"
            )
        return [mismatch.get(r, 0.0) for r in rowids]
    if strategy not in ("uncertainty", "runs-disagree"):
        raise RagreviewError(f"unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
    if strategy == "uncertainty":
        # the least sure item is the one of lowest log-probability (1 − exp is monotone),
        # so SQL's min per record gives logprob_uncertainty's value without the rows
        least_sure = db.conn.execute(
            "SELECT l.record, min(l.logprob) FROM run_labels l JOIN records r "
            "ON r.rowid = l.record WHERE r.dataset = ? AND l.logprob IS NOT NULL "
            "GROUP BY l.record",
            (dataset,),
        ).fetchall()
        if least_sure:
            by_record = {record: [float(lp)] for record, lp in least_sure}
            return [queue_signals.logprob_uncertainty(by_record.get(r, ())) for r in rowids]
    rows = _run_rows(db, dataset)
    runs = {row[1] for row in rows}
    if strategy == "uncertainty":
        if len(runs) >= 2:  # no log-probabilities: how much the runs' labels spread
            items = _items_across_runs(rows)
            return [queue_signals.run_entropy(items.get(r, {})) for r in rowids]
        raise RagreviewError(
            f"dataset {dataset!r} has no judge log-probabilities and fewer than two judge "
            "runs: --strategy uncertainty has nothing to go on (judge with an endpoint "
            "that returns logprobs, or judge twice)"
        )
    if len(runs) < 2:
        raise RagreviewError(
            f"dataset {dataset!r} has {len(runs)} judge run{'s' if len(runs) != 1 else ''}: "
            "--strategy runs-disagree needs at least two"
        )
    # the items the TUI marks ≈ (store.run_layers: an absent defaulted label counts as
    # its default), as a share of the record's items
    items = _items_across_runs(rows)
    split_sql = f"SELECT r.rowid FROM records r WHERE r.dataset = ? AND {run_layers.RUNS_DISAGREE}"
    share = {
        rowid: len(run_layers.disagreements(db, rowid)) / max(1, len(items.get(rowid, {})))
        for (rowid,) in db.conn.execute(split_sql, (dataset,)).fetchall()
    }
    return [share.get(r, 0.0) for r in rowids]


def draw(db: sqlite_utils.Database, dataset: str, strategy: str, n: int, seed: int = 0) -> Draw:
    """Draw and store a queue of expected size ``n`` (docs/estimate.md)."""
    rowids = _rowids(db, dataset)
    if n < 1:
        raise RagreviewError(f"--n must be at least 1, got {n}")
    if n > len(rowids):
        raise RagreviewError(f"dataset {dataset!r} has only {len(rowids)} records; cannot draw {n}")
    from . import metric_rows

    metric_rows.ensure(db, dataset)
    got = scores(db, dataset, strategy, rowids)
    if strategy != "random" and not any(s > 0 for s in got):
        raise RagreviewError(
            f"no record of dataset {dataset!r} has a {strategy} signal above 0: nothing to "
            "weight the draw by (use --strategy random)"
        )
    share = 1.0 if strategy == "random" else sampling.UNIFORM_SHARE
    weights = sampling.mixed_weights(got, share)
    tau, drawn = sampling.poisson_draw(weights, n, seed)
    at = now()
    with write(db.conn) as conn:
        cur = conn.execute(
            "INSERT INTO review_draws (dataset, strategy, n, seed, uniform_share, threshold, "
            "population, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (dataset, strategy, n, seed, share, None if tau == float("inf") else tau,
             len(rowids), at),
        )  # fmt: skip
        draw_id = cur.lastrowid
        assert draw_id is not None
        members = tuple(
            Member(rowids[i], position, weights[i], key, pi)
            for position, (i, key, pi) in enumerate(drawn)
        )
        conn.executemany(
            "INSERT INTO review_draw_records (draw, record, position, weight, key, inclusion) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(draw_id, m.record, m.position, m.weight, m.key, m.inclusion) for m in members],
        )
    return Draw(draw_id, dataset, strategy, n, seed, share, tau, len(rowids), at, members)


def latest(db: sqlite_utils.Database, dataset: str) -> Draw | None:
    """The dataset's most recent draw (the one the estimate uses), or None."""
    if not db.conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'review_draws'"
    ).fetchone():
        return None  # a read-only DB from before m011
    row = db.conn.execute(
        "SELECT id, strategy, n, seed, uniform_share, threshold, population, at "
        "FROM review_draws WHERE dataset = ? ORDER BY id DESC LIMIT 1",
        (dataset,),
    ).fetchone()
    if row is None:
        return None
    draw_id, strategy, n, seed, share, tau, population, at = row
    members = tuple(
        Member(*r)
        for r in db.conn.execute(
            "SELECT record, position, weight, key, inclusion FROM review_draw_records "
            "WHERE draw = ? ORDER BY position",
            (draw_id,),
        )
    )
    tau = float("inf") if tau is None else tau
    return Draw(draw_id, dataset, strategy, n, seed, share, tau, population, at, members)
