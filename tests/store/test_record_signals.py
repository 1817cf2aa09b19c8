"""``record_signals`` (what ``queue --strategy impact`` scores a record by, stored per
record: store/record_signals.py) stay what the records' label and metric rows give
after every kind of write, and draws from them are exactly the old SQL's.

Each check compares the stored rows, decoded straight from the table, with the same
values recomputed from ``judge_labels`` and ``record_metrics``, then the impact scores
and a seeded draw with the SQL that read those rows before the signals existed
(``OLD_IMPACT_SQL``), bit for bit."""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path

import pytest

from bench.import_bench import make_row
from ragreview.core import sampling
from ragreview.core.errors import RagreviewError
from ragreview.services import queue_draws
from ragreview.store import (
    history,
    judge_store,
    metric_writes,
    open_database,
    record_order,
    record_signals,
    records,
    run_layers,
    run_signals,
)

from ..cli.agreement_helpers import quick
from .test_queue_draws_unchanged import OLD_impact_scores, OLD_runs_scores

# stored-mismatch's SQL before the signals (store/review_draws.py, read_mismatch)
OLD_HAS_STORED = (
    "SELECT 1 FROM record_metrics m JOIN records r ON r.rowid = m.record "
    "WHERE r.dataset = ? AND m.layer = 'stored' AND instr(m.name, '._') = 0 LIMIT 1"
)
OLD_MISMATCH_SQL = """
    SELECT m.record, total(abs(m.value - j.value)) FROM record_metrics m
    JOIN records r ON r.rowid = m.record
    JOIN record_metrics j ON j.record = m.record AND j.layer = 'judge' AND j.name = m.name
    WHERE r.dataset = ? AND m.layer = 'stored' AND instr(m.name, '._') = 0
      AND m.value IS NOT NULL AND j.value IS NOT NULL
    GROUP BY m.record
"""


def OLD_mismatch_scores(db, dataset: str, rowids: list[int]) -> list[float] | None:
    if not db.conn.execute(OLD_HAS_STORED, (dataset,)).fetchone():
        return None
    mismatch = dict(db.conn.execute(OLD_MISMATCH_SQL, (dataset,)).fetchall())
    return [mismatch.get(r, 0.0) for r in rowids]


# (judge label count, public defined judge values, stored-mismatch's score or None,
# the least verdict log-probability or None)
Values = tuple[int, dict[str, float], float | None, float | None]


def from_scratch(db, dataset: str) -> dict[int, Values]:
    """Per record of the dataset, its signal as the label and metric rows give it."""
    out: dict[int, Values] = {}
    for (rowid,) in db.conn.execute("SELECT rowid FROM records WHERE dataset = ?", (dataset,)):
        size = db.conn.execute(
            "SELECT count(*) FROM judge_labels WHERE record = ?", (rowid,)
        ).fetchone()[0]
        values = dict(
            db.conn.execute(
                "SELECT name, value FROM record_metrics WHERE record = ? AND layer = 'judge' "
                "AND value IS NOT NULL AND instr(name, '._') = 0",
                (rowid,),
            )
        )
        mismatch = db.conn.execute(
            "SELECT count(*), total(abs(m.value - j.value)) FROM record_metrics m "
            "LEFT JOIN record_metrics j ON j.record = m.record AND j.layer = 'judge' "
            "AND j.name = m.name AND j.value IS NOT NULL AND m.value IS NOT NULL "
            "WHERE m.record = ? AND m.layer = 'stored' AND instr(m.name, '._') = 0",
            (rowid,),
        ).fetchone()
        least = db.conn.execute(
            "SELECT min(logprob) FROM run_labels WHERE record = ?", (rowid,)
        ).fetchone()[0]
        out[rowid] = (size, values, mismatch[1] if mismatch[0] else None, least)
    return out


def as_stored(db, dataset: str) -> dict[int, Values]:
    """The dataset's rows of record_signals, decoded (absent records left out)."""
    names = {i: n for i, n in db.conn.execute("SELECT id, name FROM record_signal_names")}
    out: dict[int, Values] = {}
    for rowid, packed in db.conn.execute(
        "SELECT s.record, s.packed FROM record_signals s JOIN records r ON r.rowid = s.record "
        "WHERE r.dataset = ?",
        (dataset,),
    ):
        pairs = list(struct.iter_unpack("<Id", packed))
        assert pairs[0][0] == 0  # the header: (0, size)
        tail = {i: v for i, v in pairs[1:] if i >= record_signals.LEAST_LOGPROB}
        values = {names[i]: v for i, v in pairs[1:] if v == v and i not in tail}
        mismatch, least = tail.get(record_signals.MISMATCH), tail.get(record_signals.LEAST_LOGPROB)
        out[rowid] = (int(pairs[0][1]), values, mismatch, least)
    return out


def listed(db, dataset: str) -> list[int]:
    sql = "SELECT rowid FROM records WHERE dataset = ? ORDER BY position, rowid"
    return [r for (r,) in db.conn.execute(sql, (dataset,))]


def check(db, dataset: str, *, complete: bool = True, seed: int = 3) -> None:
    """The stored signals are current (every record has one when ``complete``), and
    impact and stored-mismatch draws are the ones the old SQL's scores give."""
    expected = from_scratch(db, dataset)
    stored = as_stored(db, dataset)
    assert stored == {r: expected[r] for r in stored}  # what is there is current
    if complete:
        assert stored.keys() == expected.keys()
    rowids = listed(db, dataset)
    old_scores = OLD_impact_scores(db, dataset, rowids)
    assert queue_draws.scores(db, dataset, "impact", rowids) == old_scores  # bit for bit
    assert as_stored(db, dataset) == expected  # (a draw fills in absent ones)
    weights = sampling.mixed_weights(old_scores, sampling.UNIFORM_SHARE)
    tau, old = sampling.poisson_draw(weights, 20, seed)
    new = queue_draws.draw(db, dataset, "impact", 20, seed)
    assert [(m.record, m.key, m.inclusion) for m in new.members] == [
        (rowids[i], k, p) for i, k, p in old
    ]
    assert new.threshold == tau
    if any(v[3] is not None for v in expected.values()):  # uncertainty, by its logprobs
        old_uncertainty = OLD_runs_scores(db, dataset, "uncertainty", rowids)
        assert queue_draws.scores(db, dataset, "uncertainty", rowids) == old_uncertainty
        weights = sampling.mixed_weights(old_uncertainty, sampling.UNIFORM_SHARE)
        tau, old = sampling.poisson_draw(weights, 20, seed)
        new = queue_draws.draw(db, dataset, "uncertainty", 20, seed)
        assert [(m.record, m.key, m.inclusion) for m in new.members] == [
            (rowids[i], k, p) for i, k, p in old
        ]
    old_mismatch = OLD_mismatch_scores(db, dataset, rowids)
    if old_mismatch is None:
        with pytest.raises(RagreviewError, match="has nothing to go on"):
            queue_draws.draw(db, dataset, "stored-mismatch", 20, seed)
        return
    assert queue_draws.scores(db, dataset, "stored-mismatch", rowids) == old_mismatch
    weights = sampling.mixed_weights(old_mismatch, sampling.UNIFORM_SHARE)
    tau, old = sampling.poisson_draw(weights, 20, seed)
    new = queue_draws.draw(db, dataset, "stored-mismatch", 20, seed)
    assert [(m.record, m.key, m.inclusion) for m in new.members] == [
        (rowids[i], k, p) for i, k, p in old
    ]


def _write_rows(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


@pytest.fixture
def gen(tmp_path):
    """160 RAGBench rows imported into a real DB file; (db, rows, path)."""
    rng = random.Random(515)
    rows = [make_row(i, rng) for i in range(160)]
    for row in rows[::3]:  # the file's own scores off from its labels': a mismatch
        row["relevance_score"] = rng.random()
        row["utilization_score"] = rng.random()
    path = tmp_path / "gen.jsonl"
    _write_rows(path, rows)
    quick("import", str(path))
    return open_database(tmp_path / "gen.ragreview.db"), rows, path


def test_an_import_writes_every_records_signal(gen, fixtures_dir) -> None:
    db, _, path = gen
    mismatch = OLD_mismatch_scores(db, "gen", listed(db, "gen"))
    assert mismatch is not None and sum(m > 0 for m in mismatch) > 20
    check(db, "gen")
    facts = fixtures_dir / "factscore" / "factscore_labeled_ChatGPT.jsonl"
    quick("import", str(facts), "--db", str(path.with_suffix(".ragreview.db")), "--dataset", "fs")
    undefined = "SELECT count(*) FROM record_metrics WHERE layer = 'judge' AND value IS NULL"
    assert db.conn.execute(undefined).fetchone()[0] > 0  # (packed as NaN, left out)
    check(db, "fs")  # (with counts too: unbounded, left out of the scores)
    check(db, "gen")  # one dataset's import leaves the other's alone


def test_a_re_import_keeps_them_current_for_changed_and_new_lines(gen) -> None:
    db, rows, path = gen
    rng = random.Random(9)
    for row in rows[::4]:  # other judge labels: other metric values and label counts
        row.update(make_row(0, rng) | {"id": row["id"]})
    _write_rows(path, rows + [make_row(i, rng) for i in range(1000, 1040)])
    quick("import", str(path))
    check(db, "gen")


def test_human_labels_leave_them_current(gen) -> None:
    db, _, _ = gen
    before = as_stored(db, "gen")
    for rowid in listed(db, "gen")[:12]:
        stored = records.get(db, rowid)
        target = next(iter(stored.judge.get("supported", {"a": None})))
        history.set_label(db, rowid, "supported", target, False, "rev")
    assert as_stored(db, "gen") == before  # the judge layer did not move
    check(db, "gen")


def test_a_judge_run_keeps_them_current(gen) -> None:
    db, _, _ = gen
    run = judge_store.start_run(db, "gen", "m", None, "trace")
    rng = random.Random(4)
    for rowid in listed(db, "gen")[::3]:
        judge = records.get(db, rowid).judge
        keys = list(judge.get("relevant", {})) or ["0a"]
        layer = {
            "supported": {t: rng.random() < 0.5 for t in judge.get("supported", {})},
            "relevant": {k: True for k in keys[: rng.randint(0, len(keys))]},  # fewer
        }
        logprobs = {("supported", t): -rng.random() * 3 for t in layer["supported"]}
        judge_store.save_result(
            db, rowid, run, "trace", ("relevant", "supported"), layer, logprobs=logprobs
        )
    assert any(v[3] is not None for v in as_stored(db, "gen").values())
    check(db, "gen")
    run_layers.use(db, "gen", run_layers.import_run_id("gen"))  # back to the import's
    check(db, "gen", seed=8)


def test_a_variant_change_drops_them_and_the_next_draw_rebuilds_them(gen, monkeypatch) -> None:
    db, _, _ = gen
    assert metric_writes.put_setting(db, "gen", "trace.variant", "capped20")
    assert as_stored(db, "gen") == {}
    check(db, "gen", complete=False)  # (160 records: rebuilt by look-ups)
    assert metric_writes.put_setting(db, "gen", "trace.variant", "ragbench")
    monkeypatch.setattr(record_order, "WHOLE", 100)  # as a large dataset's: by scans
    check(db, "gen", complete=False, seed=1)


def test_a_db_from_before_them_gets_them_at_its_first_draw(gen) -> None:
    db, _, _ = gen
    with db.conn:
        db.conn.execute("DELETE FROM record_signals WHERE record % 3 = 0")
    check(db, "gen", complete=False)
    with db.conn:
        db.conn.execute("DELETE FROM record_signals")
    check(db, "gen", complete=False, seed=2)


def test_the_dataset_is_read_in_slices_in_list_order(gen, monkeypatch) -> None:
    db, _, _ = gen
    whole = record_order.ordered(db.conn, "gen", signals=True)
    monkeypatch.setattr(record_order, "SLICE", 7)  # 160 records: 23 slices, the last short
    sliced = record_order.ordered(db.conn, "gen", signals=True)
    assert sliced.rowids.tolist() == whole.rowids.tolist() == listed(db, "gen")
    for field in ("sizes", "entry_record", "entry_name", "entry_value"):
        assert getattr(sliced, field).tolist() == getattr(whole, field).tolist()
    assert record_order.ordered(db.conn, "gen").rowids.tolist() == listed(db, "gen")
    assert len(record_order.ordered(db.conn, "nothing").rowids) == 0


# -- the judge runs' signals (store/run_signals.py) ---------------------------------------


def run_signals_stored(db, dataset: str) -> dict[int, tuple[float, float]]:
    return {
        rowid: struct.unpack("<dd", packed)
        for rowid, packed in db.conn.execute(
            "SELECT q.record, q.packed FROM record_run_signals q JOIN records r "
            "ON r.rowid = q.record WHERE r.dataset = ?",
            (dataset,),
        )
    }


def check_runs(db, dataset: str, *, seed: int = 5) -> None:
    """The stored run signals are what the run labels give now, and runs-disagree and
    uncertainty (without log-probabilities) draw what the code before them drew."""
    stored = run_signals_stored(db, dataset)
    now = {r: (e, s) for r, e, s in run_signals.compute(db, list(stored))}
    assert stored == now  # what is there is current
    rowids = listed(db, dataset)
    for strategy in ("runs-disagree", "uncertainty"):
        old_scores = OLD_runs_scores(db, dataset, strategy, rowids)
        assert queue_draws.scores(db, dataset, strategy, rowids) == old_scores
        assert len(set(old_scores)) >= 2
        weights = sampling.mixed_weights(old_scores, sampling.UNIFORM_SHARE)
        tau, old = sampling.poisson_draw(weights, 15, seed)
        new = queue_draws.draw(db, dataset, strategy, 15, seed)
        assert [(m.record, m.key, m.inclusion) for m in new.members] == [
            (rowids[i], k, p) for i, k, p in old
        ]
    assert run_signals_stored(db, dataset).keys() == set(rowids)  # (absent ones computed)


def _judge(db, dataset: str, rowids: list[int], rng: random.Random) -> None:
    """A judge run (no log-probabilities) through judge_store, on these records."""
    run = judge_store.start_run(db, dataset, "m", None, "trace")
    for rowid in rowids:
        judge = records.get(db, rowid).judge
        keys = list(judge.get("relevant", {})) or ["0a"]
        layer = {
            "supported": {t: rng.random() < 0.5 for t in judge.get("supported", {})},
            "relevant": {k: True for k in keys[: rng.randint(0, len(keys))]},
        }
        judge_store.save_result(db, rowid, run, "trace", ("relevant", "supported"), layer)


def test_run_signals_stay_current_through_runs_and_imports(gen) -> None:
    db, rows, path = gen
    rng = random.Random(12)
    rowids = listed(db, "gen")
    _judge(db, "gen", rowids[::2], rng)  # the import's labels become a run of their own
    assert run_signals_stored(db, "gen").keys() == set(rowids[::2])
    check_runs(db, "gen")
    _judge(db, "gen", rowids[::3], rng)  # a third run over others: rewritten where it went
    check_runs(db, "gen", seed=6)
    run_layers.use(db, "gen", run_layers.import_run_id("gen"))  # no run label changes
    check_runs(db, "gen", seed=7)
    for row in rows[::5]:  # re-imported lines with other labels: the import run's change
        row.update(make_row(0, rng) | {"id": row["id"]})
    _write_rows(path, rows)
    quick("import", str(path))
    check_runs(db, "gen", seed=8)
