"""Review draws as stored (``review_draws``, ``review_draw_records``; docs/estimate.md),
and the reads of the signals the queue strategies score records by (``impact``'s and
``stored-mismatch``'s are stored per record: ``store.record_signals``, which also reads a
draw's population). The
drawing itself is ``services.queue_draws``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .db import write
from .records import now

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils


@dataclass(frozen=True)
class Member:
    """One record of a drawn review queue, with its weight and inclusion probability."""

    record: int  # rowid
    position: int  # draw order, from 0
    weight: float
    key: float
    inclusion: float  # π


@dataclass(frozen=True)
class Draw:
    """A review queue as drawn (docs/estimate.md): its strategy, seed and members."""

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


def read_run_count(db: sqlite_utils.Database, dataset: str) -> int:
    """How many judge runs gave labels to the dataset's records (each run's found by
    its first such label, not by reading them all)."""
    sql = (
        "SELECT count(*) FROM judge_runs j WHERE EXISTS (SELECT 1 FROM run_labels l "
        "JOIN records r ON r.rowid = l.record WHERE l.run = j.id AND r.dataset = ?)"
    )
    return int(db.conn.execute(sql, (dataset,)).fetchone()[0])


def save(
    db: sqlite_utils.Database,
    dataset: str,
    strategy: str,
    n: int,
    seed: int,
    share: float,
    tau: float,
    rowids: Sequence[int],
    weights: Sequence[float] | Any,
    drawn: Sequence[tuple[int, float, float]],
) -> Draw:
    """Record a draw of ``rowids`` (``drawn``: (index, key, π) in draw order)."""
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
            Member(rowids[i], position, float(weights[i]), key, pi)
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
