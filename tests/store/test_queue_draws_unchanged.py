"""``queue`` draws in SQL and numpy (issue 27) give what the per-record Python code gave.

``OLD_*`` below are the functions of core/sampling.py and the stored-mismatch scoring of
store/review_draws.py as they were before issue 27 (commit 81e7dec), copied verbatim as
the reference: a seed must draw the same records, with the same threshold, keys and
inclusion probabilities, on a generated dataset. (``impact`` changed on purpose: its
own tests are in tests/cli/test_queue_cli.py.)

Where the old Newton iteration met its 1e-13 tolerance the new one takes the same steps
and the draw is bit for bit the old one. On large uniform draws it never did: rounding
noise in the sums kept its steps near 1e-10 for all 200 iterations (15 s at 100,000
records); the new one stops there, with tau within that noise, so the records drawn are
the same and pi agrees to ~1e-12 (the last tests replay the old 200 iterations)."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence

import pytest

from bench.import_bench import make_row
from ragreview.core import sampling
from ragreview.services import queue_draws as review_draws
from ragreview.store import open_database

from ..cli.agreement_helpers import quick


def OLD_mixed_weights(scores: Sequence[float], uniform_share: float = 0.2) -> list[float]:
    n = len(scores)
    if n == 0:
        return []
    total = sum(scores)
    if total <= 0 or uniform_share >= 1:
        return [1.0 / n] * n
    return [(1 - uniform_share) * s / total + uniform_share / n for s in scores]


def OLD_inclusion(weight: float, threshold: float) -> float:
    if math.isinf(threshold):
        return 1.0
    return -math.expm1(-threshold * weight)


def OLD_threshold(weights: Sequence[float], n: int) -> float:
    if not 0 < n <= len(weights):
        raise ValueError(f"cannot draw {n} of {len(weights)}")
    if n == len(weights):
        return math.inf
    tau = float(n)
    for _ in range(200):
        f = sum(-math.expm1(-tau * w) for w in weights) - n
        slope = sum(w * math.exp(-tau * w) for w in weights)
        if slope <= 0:
            break
        step = -f / slope
        tau += step
        if abs(step) <= 1e-13 * tau:
            break
    return tau


def OLD_poisson_draw(weights, n, seed, tau=None):
    tau = OLD_threshold(weights, n) if tau is None else tau
    rng = random.Random(seed)
    keys = [rng.expovariate(1.0) / w if w > 0 else math.inf for w in weights]
    drawn = sorted((k, i) for i, k in enumerate(keys) if k < tau)
    return tau, [(i, k, OLD_inclusion(weights[i], tau)) for k, i in drawn]


def OLD_mismatch_scores(db, dataset: str, rowids: list[int]) -> list[float]:
    def layer(name: str) -> dict[int, dict[str, float | None]]:
        out: dict[int, dict[str, float | None]] = {}
        for rowid, metric, value in db.conn.execute(
            "SELECT m.record, m.name, m.value FROM record_metrics m "
            "JOIN records r ON r.rowid = m.record WHERE r.dataset = ? AND m.layer = ?",
            (dataset, name),
        ):
            if "._" not in metric:
                out.setdefault(rowid, {})[metric] = value
        return out

    stored, judge = layer("stored"), layer("judge")
    scores = []
    for s, j in zip([stored.get(r, {}) for r in rowids], [judge.get(r, {}) for r in rowids]):
        total = 0.0
        for name, sv in s.items():
            jv = j.get(name)
            if sv is not None and jv is not None:
                total += abs(sv - jv)
        scores.append(total)
    return scores


@pytest.mark.parametrize("n_records, n", [(1, 1), (50, 50), (1000, 20), (5000, 200)])
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_core_draw_is_bit_for_bit_the_old_one(n_records: int, n: int, seed: int) -> None:
    rng = random.Random(seed + n_records)
    skewed = [rng.random() ** 4 if rng.random() < 0.7 else 0.0 for _ in range(n_records)]
    for scores, share in (([1.0] * n_records, 1.0), (skewed, 0.2), (skewed, 0.0)):
        weights = sampling.mixed_weights(scores, share)
        assert weights == OLD_mixed_weights(scores, share)
        if sum(w > 0 for w in weights) < n:
            continue
        assert sampling.poisson_draw(weights, n, seed) == OLD_poisson_draw(weights, n, seed)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """400 RAGBench rows with stored scores, a third of them off from what the labels
    give (so stored-mismatch has a signal), imported into a real DB file."""
    folder = tmp_path_factory.mktemp("queue")
    rng = random.Random(2333)
    rows = [make_row(i, rng) for i in range(400)]
    for row in rows[::3]:
        row["relevance_score"] = rng.random()
        row["utilization_score"] = rng.random()
    path = folder / "gen.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    quick("import", str(path))
    return folder / "gen.ragreview.db"


@pytest.mark.parametrize("strategy", ["random", "stored-mismatch"])
@pytest.mark.parametrize("seed", [0, 3])
def test_store_draw_draws_the_old_records(generated, strategy: str, seed: int) -> None:
    db = open_database(generated)
    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records ORDER BY position, rowid")]
    if strategy == "random":
        old_scores, share = [1.0] * len(rowids), 1.0
    else:
        old_scores, share = OLD_mismatch_scores(db, "gen", rowids), 0.2
        assert review_draws.scores(db, "gen", strategy, rowids) == pytest.approx(old_scores)
    weights = OLD_mixed_weights(old_scores, share)
    tau, old = OLD_poisson_draw(weights, 40, seed)
    new = review_draws.draw(db, "gen", strategy, 40, seed)
    assert [m.record for m in new.members] == [rowids[i] for i, _, _ in old]
    assert new.threshold == pytest.approx(tau, rel=1e-12)
    assert [m.inclusion for m in new.members] == pytest.approx([p for _, _, p in old])


def _old_threshold_replayed(weights: list[float], n: int) -> float:
    """OLD_threshold's arithmetic with numpy (cumsum adds left to right as sum() did;
    bit-identical, checked below), fast enough for 200 iterations."""
    import numpy as np

    w = np.asarray(weights)
    tau = float(n)
    for _ in range(200):
        f = float(np.cumsum(-np.expm1(-tau * w))[-1]) - n
        slope = float(np.cumsum(w * np.exp(-tau * w))[-1])
        step = -f / slope
        tau += step
        if abs(step) <= 1e-13 * tau:
            break
    return tau


def test_the_replay_is_the_old_threshold() -> None:
    weights = [1.0 / 20_000] * 20_000
    assert _old_threshold_replayed(weights, 200) == OLD_threshold(weights, 200)


@pytest.mark.parametrize("seed", [0, 5])
def test_large_uniform_draw_stops_at_the_noise_with_the_same_records(seed: int) -> None:
    weights = [1.0 / 100_000] * 100_000
    old_tau = _old_threshold_replayed(weights, 200)
    tau, new = sampling.poisson_draw(weights, 200, seed)
    assert tau != old_tau and tau == pytest.approx(old_tau, rel=1e-11)
    _, old = OLD_poisson_draw(weights, 200, seed, tau=old_tau)
    assert [i for i, _, _ in new] == [i for i, _, _ in old]
    assert [k for _, k, _ in new] == [k for _, k, _ in old]  # the keys: the same Exp draws
    assert [p for _, _, p in new] == pytest.approx([p for _, _, p in old], rel=1e-11)


def test_impact_in_sql_is_the_core_definition(generated) -> None:
    from ragreview.core import queue_signals

    db = open_database(generated)
    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records ORDER BY position, rowid")]
    values: dict[int, dict[str, float | None]] = {r: {} for r in rowids}
    for record, name, value in db.conn.execute(
        "SELECT record, name, value FROM record_metrics WHERE layer = 'judge'"
    ):
        if "._" not in name:
            values[record][name] = value
    sizes = dict(db.conn.execute("SELECT record, count(*) FROM judge_labels GROUP BY record"))
    expected = queue_signals.impact([values[r] for r in rowids], [sizes.get(r, 0) for r in rowids])
    assert review_draws.scores(db, "gen", "impact", rowids) == pytest.approx(expected)
    assert len(set(expected)) > 10  # sizes differ: the scores do


# -- impact (issue 27, second step): its SQL as it was before the stored signals --------

OLD_IMPACT_SQL = """
        WITH sizes AS (
            SELECT l.record, count(*) AS n FROM judge_labels l
            JOIN records r ON r.rowid = l.record WHERE r.dataset = :d GROUP BY l.record
        ),
        defined AS (
            SELECT m.record, m.name, m.value, max(1, coalesce(s.n, 0)) AS size
            FROM record_metrics m JOIN records r ON r.rowid = m.record
            LEFT JOIN sizes s ON s.record = m.record
            WHERE r.dataset = :d AND m.layer = 'judge' AND m.value IS NOT NULL AND instr(m.name, '._') = 0
        ),
        bounded AS (
            SELECT name, sum(size) AS total FROM defined
            GROUP BY name HAVING min(value) >= 0 AND max(value) <= 1
        )
        SELECT d.record, max(d.size * max(d.value, 1 - d.value) / b.total)
        FROM defined d JOIN bounded b ON b.name = d.name GROUP BY d.record
    """  # noqa: E501


def OLD_impact_scores(db, dataset: str, rowids: list[int]) -> list[float]:
    impact = dict(db.conn.execute(OLD_IMPACT_SQL, {"d": dataset}).fetchall())
    return [impact.get(r, 0.0) for r in rowids]


@pytest.fixture(scope="module")
def two_datasets(tmp_path_factory, fixtures_dir):
    """The generated rows and the FActScore fixture in one DB file: each dataset's
    impact reads its own records only."""
    folder = tmp_path_factory.mktemp("impact")
    rng = random.Random(4242)
    rows = [make_row(i, rng) for i in range(300)]
    path = folder / "gen.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    db_path = folder / "both.ragreview.db"
    quick("import", str(path), "--db", str(db_path), "--dataset", "gen")
    facts = fixtures_dir / "factscore" / "factscore_labeled_ChatGPT.jsonl"
    quick("import", str(facts), "--db", str(db_path), "--dataset", "fs")
    return db_path


@pytest.mark.parametrize("dataset", ["gen", "fs"])
@pytest.mark.parametrize("seed", [0, 1, 9])
def test_impact_draws_exactly_what_the_old_sql_gave(two_datasets, dataset: str, seed: int) -> None:
    db = open_database(two_datasets)
    rowids = [
        r
        for (r,) in db.conn.execute(
            "SELECT rowid FROM records WHERE dataset = ? ORDER BY position, rowid", (dataset,)
        )
    ]
    old_scores = OLD_impact_scores(db, dataset, rowids)
    assert review_draws.scores(db, dataset, "impact", rowids) == old_scores  # bit for bit
    weights = sampling.mixed_weights(old_scores, sampling.UNIFORM_SHARE)
    tau, old = sampling.poisson_draw(weights, 25, seed)
    new = review_draws.draw(db, dataset, "impact", 25, seed)
    assert [(m.record, m.key, m.inclusion) for m in new.members] == [
        (rowids[i], k, p) for i, k, p in old
    ]
    assert new.threshold == tau


# -- the judge runs' strategies: their scoring as it was before the draws moved to
# services/queue_draws (commit f2af56a), copied as the reference ------------------------


def OLD_runs_scores(db, dataset: str, strategy: str, rowids: list[int]) -> list[float]:
    from ragreview.core import queue_signals
    from ragreview.store import run_layers

    def items_across_runs(rows):
        out: dict = {}
        for record, _run, name, target, value, _lp in rows:
            canonical = json.dumps(json.loads(value), sort_keys=True)
            out.setdefault(record, {}).setdefault((name, target), []).append(canonical)
        return out

    if strategy == "uncertainty":
        least_sure = db.conn.execute(
            "SELECT l.record, min(l.logprob) FROM run_labels l JOIN records r "
            "ON r.rowid = l.record WHERE r.dataset = ? AND l.logprob IS NOT NULL "
            "GROUP BY l.record",
            (dataset,),
        ).fetchall()
        if least_sure:
            by_record = {record: [float(lp)] for record, lp in least_sure}
            return [queue_signals.logprob_uncertainty(by_record.get(r, ())) for r in rowids]
    rows = list(
        db.conn.execute(
            "SELECT l.record, l.run, l.name, l.target, l.value, l.logprob FROM run_labels l "
            "JOIN records r ON r.rowid = l.record WHERE r.dataset = ?",
            (dataset,),
        )
    )
    items = items_across_runs(rows)
    if strategy == "uncertainty":
        return [queue_signals.run_entropy(items.get(r, {})) for r in rowids]
    split_sql = (
        f"SELECT r.rowid FROM records r WHERE r.dataset = ? AND {run_layers.runs_disagree_sql()}"
    )
    share = {
        rowid: len(run_layers.disagreements(db, rowid)) / max(1, len(items.get(rowid, {})))
        for (rowid,) in db.conn.execute(split_sql, (dataset,)).fetchall()
    }
    return [share.get(r, 0.0) for r in rowids]


def _runs_db(folder, with_logprobs: bool):
    """80 TRACe records, two judge runs that agree on most verdicts; with_logprobs: each
    verdict with a log-probability (the uncertainty of the least sure one scores)."""
    from ..cli.agreement_helpers import trace_record

    rng = random.Random(99 if with_logprobs else 98)
    path = folder / "runs.jsonl"
    path.write_text("".join(json.dumps(trace_record(f"t{i:03d}")) + "\n" for i in range(80)))
    quick("import", str(path))
    db = open_database(folder / "runs.ragreview.db")
    for run_id in ("r1", "r2"):
        db.conn.execute(
            "INSERT INTO judge_runs (id, dataset, model, task, started) "
            "VALUES (?, 'runs', 'test', 'trace', '2026-01-01T00:00:00Z')",
            (run_id,),
        )
    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records ORDER BY position")]
    for rowid in rowids:
        for name, target in (("supported", "a"), ("relevant", "0a")):
            first = rng.random() < 0.7
            for run_id in ("r1", "r2"):
                value = first if run_id == "r1" or rng.random() < 0.8 else not first
                logprob = math.log(rng.uniform(0.3, 1.0)) if with_logprobs else None
                db.conn.execute(
                    "INSERT INTO run_labels VALUES (?, ?, ?, ?, ?, ?)",
                    (run_id, rowid, name, target, json.dumps(value), logprob),
                )
    # (raw SQL, past the write paths that keep each record's signals: a draw rebuilds
    # them from the rows, as for a DB from before them; tests/store/test_record_signals.py
    # writes runs through judge_store)
    db.conn.execute("DELETE FROM record_signals")
    db.conn.commit()
    return db, rowids


@pytest.mark.parametrize(
    "strategy, with_logprobs",
    [("uncertainty", True), ("uncertainty", False), ("runs-disagree", False)],
)
def test_runs_strategies_draw_exactly_what_they_did(tmp_path, strategy, with_logprobs) -> None:
    db, rowids = _runs_db(tmp_path, with_logprobs)
    old_scores = OLD_runs_scores(db, "runs", strategy, rowids)
    assert review_draws.scores(db, "runs", strategy, rowids) == old_scores
    assert len(set(old_scores)) >= 2  # the records differ: the draw is weighted
    for seed in (0, 4):
        weights = sampling.mixed_weights(old_scores, sampling.UNIFORM_SHARE)
        tau, old = sampling.poisson_draw(weights, 10, seed)
        new = review_draws.draw(db, "runs", strategy, 10, seed)
        assert [(m.record, m.key, m.inclusion) for m in new.members] == [
            (rowids[i], k, p) for i, k, p in old
        ]
        assert new.threshold == tau
