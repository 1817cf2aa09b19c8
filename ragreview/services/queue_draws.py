"""Review queues (``ragreview queue``): weighted, seeded draws of records to review with
each record's inclusion probability recorded (docs/estimate.md).

A strategy scores every record of the dataset from signals that exist before any human
looks, kept per record (``store.record_signals``, ``store.run_signals``); ``core.sampling`` turns the scores (mixed with a
uniform share, so every record can be drawn) into a Poisson draw of expected size n, in
draw order, which ``store.review_draws.save`` records. Already reviewed records can be
drawn too: the draw is of the whole dataset, or the estimate could not weight it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import queue_signals, sampling
from ..core.errors import RagreviewError
from ..store import metric_writes, record_order, run_signals
from ..store import review_draws as stored
from ..store.record_order import Ordered
from ..store.review_draws import Draw

if TYPE_CHECKING:  # sqlite_utils imports click: keep the import light
    import sqlite_utils

STRATEGIES = ("random", "uncertainty", "impact", "runs-disagree", "stored-mismatch")
SIGNALLED = ("impact", "stored-mismatch")  # scored from store.record_signals
READS_SIGNALS = (*SIGNALLED, "uncertainty")  # (its log-probabilities)


def _impact(records: Ordered) -> list[float]:
    """``queue_signals.impact`` of ``records`` (read with their signals), in their order."""
    return queue_signals.impact_array(
        records.sizes, records.entry_record, records.entry_name, records.entry_value
    ).tolist()


def _in_order(records: Ordered, got: list[float], rowids: list[int]) -> list[float]:
    """Scores of ``records`` (in their order) in ``rowids`` order, 0 for any other."""
    by_rowid = dict(zip(records.rowids.tolist(), got))
    return [by_rowid.get(r, 0.0) for r in rowids]


def scores(
    db: sqlite_utils.Database,
    dataset: str,
    strategy: str,
    rowids: list[int],
    records: Ordered | None = None,
) -> list[float]:
    """One score per record (in ``rowids`` order); raises when the signal is missing.
    ``records``: the dataset's records as ``draw`` read them, ``rowids`` theirs (with
    their signals for ``SIGNALLED`` strategies: they are not read twice)."""
    if strategy == "random":
        return [1.0] * len(rowids)
    if strategy in SIGNALLED:
        read_here = records is None or records.sizes is None
        if read_here:
            records = record_order.ordered(db.conn, dataset, signals=True)
        assert records is not None
        if strategy == "impact":
            got = _impact(records)
        elif not records.any_stored:
            raise RagreviewError(
                f"no record of dataset {dataset!r} has a stored score to compare with its "
                "recomputed one: --strategy stored-mismatch has nothing to go on"
            )
        else:
            got = records.mismatch.tolist()
        return _in_order(records, got, rowids) if read_here else got
    if strategy not in ("uncertainty", "runs-disagree"):
        raise RagreviewError(f"unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
    if strategy == "uncertainty":
        # the least sure item is the one of lowest log-probability (1 − exp is monotone),
        # so each record's stored lowest gives logprob_uncertainty's value without the rows
        read_here = records is None or records.least_logprob is None
        if read_here:
            records = record_order.ordered(db.conn, dataset, signals=True)
        assert records is not None
        least = records.least_logprob.tolist()
        if any(lp == lp for lp in least):  # (NaN: no verdict of the record has one)
            got = [queue_signals.logprob_uncertainty((lp,) if lp == lp else ()) for lp in least]
            return _in_order(records, got, rowids) if read_here else got
    runs = stored.read_run_count(db, dataset)
    if strategy == "uncertainty":
        if runs >= 2:  # no log-probabilities: how much the runs' labels spread
            return run_signals.read(db, dataset, rowids)[0].tolist()
        raise RagreviewError(
            f"dataset {dataset!r} has no judge log-probabilities and fewer than two judge "
            "runs: --strategy uncertainty has nothing to go on (judge with an endpoint "
            "that returns logprobs, or judge twice)"
        )
    if runs < 2:
        raise RagreviewError(
            f"dataset {dataset!r} has {runs} judge run{'s' if runs != 1 else ''}: "
            "--strategy runs-disagree needs at least two"
        )
    # the items the TUI marks ≈ (store.run_layers: an absent defaulted label counts as
    # its default), as a share of the record's items: stored per record
    return run_signals.read(db, dataset, rowids)[1].tolist()


def draw(db: sqlite_utils.Database, dataset: str, strategy: str, n: int, seed: int = 0) -> Draw:
    """Draw and store a queue of expected size ``n`` (docs/estimate.md)."""
    if n < 1:
        raise RagreviewError(f"--n must be at least 1, got {n}")
    metric_writes.ensure(db, dataset)
    # the population in list order, and the records' signals in the same read
    records = record_order.ordered(db.conn, dataset, signals=strategy in READS_SIGNALS)
    rowids = records.rowids.tolist()
    if n > len(rowids):
        raise RagreviewError(f"dataset {dataset!r} has only {len(rowids)} records; cannot draw {n}")
    got = scores(db, dataset, strategy, rowids, records)
    if strategy != "random" and not any(s > 0 for s in got):
        raise RagreviewError(
            f"no record of dataset {dataset!r} has a {strategy} signal above 0: nothing to "
            "weight the draw by (use --strategy random)"
        )
    share = 1.0 if strategy == "random" else sampling.UNIFORM_SHARE
    weights = sampling.mixed_weight_array(got, share)  # (no list of 300,000 floats)
    tau, drawn = sampling.poisson_draw(weights, n, seed)
    return stored.save(db, dataset, strategy, n, seed, share, tau, rowids, weights, drawn)
