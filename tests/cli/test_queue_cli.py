"""``ragreview queue`` and the corrected estimate of ``metrics --json`` end to end, on
real SQLite files (docs/estimate.md)."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from ragreview.core import estimate as core_estimate
from ragreview.core.families import FAMILIES
from ragreview.store import open_database
from ragreview.store import records as store_records

from .agreement_helpers import fact_record, quick, run, trace_record, write_jsonl

COUNTS = {name for family in FAMILIES for name in family.counts}


def _queue(path, *args):
    out = run("queue", str(path), "--json", *args).stdout
    return [json.loads(line) for line in out.splitlines()]


def _draw_rows(path, draw_id):
    db = open_database(path.with_name(path.stem + ".ragreview.db"))
    return db.conn.execute(
        "SELECT r.id, d.position, d.weight, d.inclusion FROM review_draw_records d "
        "JOIN records r ON r.rowid = d.record WHERE d.draw = ? ORDER BY d.position",
        (draw_id,),
    ).fetchall()


@pytest.fixture
def factscore(tmp_path, fixtures_dir):
    path = tmp_path / "fs.jsonl"
    shutil.copy(fixtures_dir / "factscore" / "factscore_labeled_ChatGPT.jsonl", path)
    quick("import", str(path))
    return path


def test_queue_is_reproducible_from_its_seed_and_records_the_draw(factscore) -> None:
    first = _queue(factscore, "--strategy", "impact", "--n", "20", "--seed", "4")
    again = _queue(factscore, "--strategy", "impact", "--n", "20", "--seed", "4")
    other = _queue(factscore, "--strategy", "impact", "--n", "20", "--seed", "5")
    assert first == again and first != other
    assert [d["order"] for d in first] == list(range(len(first)))
    db = open_database(factscore.with_name("fs.ragreview.db"))
    draws = db.conn.execute(
        "SELECT id, strategy, n, seed, population, threshold FROM review_draws ORDER BY id"
    ).fetchall()
    assert [d[1:5] for d in draws] == [("impact", 20, 4, 183)] * 2 + [("impact", 20, 5, 183)]
    rows = _draw_rows(factscore, draws[0][0])
    assert [(r[0], r[3]) for r in rows] == [(d["id"], d["inclusion"]) for d in first]
    # every record's π (drawn or not) follows from its weight; they sum to n
    tau = draws[0][5]
    weights = [w for (w,) in db.conn.execute("SELECT weight FROM review_draw_records")]
    assert all(r[3] == pytest.approx(-math.expm1(-tau * r[2])) for r in rows)
    assert len(weights) >= len(rows) and 0 < min(r[3] for r in rows)


def test_queue_without_a_size_shows_the_latest_draw_again(factscore) -> None:
    proc = run("queue", str(factscore), check=False)
    assert proc.returncode == 2 and "give --n" in proc.stderr  # nothing drawn yet
    first = _queue(factscore, "--strategy", "impact", "--n", "12", "--seed", "4")
    assert _queue(factscore) == first
    db = open_database(factscore.with_name("fs.ragreview.db"))
    assert db.conn.execute("SELECT count(*) FROM review_draws").fetchone() == (1,)


def test_inclusion_probabilities_of_a_stored_draw_sum_to_n(factscore) -> None:
    _queue(factscore, "--strategy", "impact", "--n", "30", "--seed", "1")
    db = open_database(factscore.with_name("fs.ragreview.db"))
    from ragreview.core import queue_signals, sampling
    from ragreview.services import queue_draws as review_draws

    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records ORDER BY position")]
    scores = review_draws.scores(db, "fs", "impact", rowids)
    weights = sampling.mixed_weights(scores)
    (tau,) = db.conn.execute("SELECT threshold FROM review_draws").fetchone()
    assert sum(sampling.inclusion(w, tau) for w in weights) == pytest.approx(30)
    stored = dict(db.conn.execute("SELECT record, weight FROM review_draw_records"))
    assert all(stored[r] == pytest.approx(weights[rowids.index(r)]) for r in stored)
    assert queue_signals.impact  # the strategy's scores are the core signal's


def test_impact_puts_first_the_record_whose_flip_moves_its_metric_most(tmp_path) -> None:
    # five TRACe records share their metrics' means (each moves them by at most 1/5);
    # the one long-form record alone carries the longform.* means: flipping its facts
    # moves them by up to the whole range.
    records = [trace_record(f"t{i}", relevant=("0a",)) for i in range(5)]
    records.insert(2, fact_record("facts", {"f1": "S", "f2": "NS"}))
    path = write_jsonl(tmp_path / "hand.jsonl", records)
    quick("import", str(path))
    drawn = _queue(path, "--strategy", "impact", "--n", "3", "--seed", "1")
    assert all(d["inclusion"] < 0.8 for d in drawn if d["id"] != "facts")
    db = open_database(tmp_path / "hand.ragreview.db")
    weights = dict(
        db.conn.execute(
            "SELECT r.id, d.weight FROM review_draw_records d JOIN records r ON r.rowid = d.record"
        ).fetchall()
    )
    # weights: 0.8 · score share + 0.2 / 6; scores 1 (facts) and 1/5 (each TRACe record)
    assert weights["facts"] == pytest.approx(0.8 * 1 / 2 + 0.2 / 6)
    assert weights["facts"] > 2 * max(w for rid, w in weights.items() if rid != "facts")
    # the draw order is successive sampling by weight: over seeds it leads most often
    from ragreview.services import queue_draws as review_draws

    firsts = [review_draws.draw(db, "hand", "impact", 1, seed).members[:1] for seed in range(60)]
    leaders = [db.conn.execute("SELECT id FROM records WHERE rowid = ?", (m[0].record,))
               .fetchone()[0] for m in firsts if m]  # fmt: skip
    assert max(set(leaders), key=leaders.count) == "facts"


def _with_run_labels(path, rows) -> None:
    """Judge runs' labels written straight into the run layers (``run_labels``), so a
    test can choose each verdict's log-probability."""
    db = open_database(path.with_name(path.stem + ".ragreview.db"))
    for run_id in sorted({row[0] for row in rows}):
        db.conn.execute(
            "INSERT INTO judge_runs (id, dataset, model, task, started) "
            "SELECT ?, name, 'test', 'trace', '2026-01-01T00:00:00Z' FROM datasets",
            (run_id,),
        )
    for run_id, rid, name, target, value, logprob in rows:
        rowid = store_records.find(db, rid).rowid
        db.conn.execute(
            "INSERT INTO run_labels VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, rowid, name, target, json.dumps(value), logprob),
        )
    # (past the write paths that keep each record's queue signals, which judge_store's
    # keep: the draw rebuilds them from the rows, as for a DB from before them)
    db.conn.execute("DELETE FROM record_signals")
    db.conn.commit()


@pytest.fixture
def traces(tmp_path):
    path = write_jsonl(tmp_path / "tr.jsonl", [trace_record(f"t{i}") for i in range(6)])
    quick("import", str(path))
    return path


def test_runs_strategies_say_clearly_when_there_are_no_runs(traces) -> None:
    for strategy in ("uncertainty", "runs-disagree"):
        proc = run("queue", str(traces), "--strategy", strategy, "--n", "2", check=False)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        assert "nothing to go on" in proc.stderr or "needs at least two" in proc.stderr
    proc = run("queue", str(traces), "--strategy", "stored-mismatch", "--n", "2", check=False)
    assert proc.returncode == 1 and "stored score" in proc.stderr


def test_uncertainty_reads_logprobs_of_the_run_labels(traces) -> None:
    _with_run_labels(
        traces,
        [("r1", f"t{i}", "supported", "a", True, math.log(0.99)) for i in range(6) if i != 3]
        + [("r1", "t3", "supported", "a", True, math.log(0.4))],
    )
    _queue(traces, "--strategy", "uncertainty", "--n", "2", "--seed", "0")
    weights = {r[0]: r[2] for r in _draw_rows(traces, 1)}
    db = open_database(traces.with_name("tr.ragreview.db"))
    every = dict(
        db.conn.execute(
            "SELECT r.id, d.weight FROM review_draw_records d JOIN records r ON r.rowid = d.record"
        )
    )
    assert every == weights
    # uncertainty 0.6 for t3, 0.01 for the others: t3's weight is the largest
    scores = {f"t{i}": 0.01 for i in range(6)} | {"t3": 0.6}
    total = sum(scores.values())
    for rid, w in weights.items():
        assert w == pytest.approx(0.8 * scores[rid] / total + 0.2 / 6)


def test_runs_disagree_and_entropy_without_logprobs(traces) -> None:
    rows = [(run_id, f"t{i}", "supported", "a", True, None) for run_id in ("r1", "r2")
            for i in range(6)]  # fmt: skip
    rows[-1] = ("r2", "t5", "supported", "a", False, None)  # the runs split on t5
    _with_run_labels(traces, rows)
    for strategy in ("runs-disagree", "uncertainty"):
        drawn = _queue(traces, "--strategy", strategy, "--n", "1", "--seed", "2")
        assert all(d["inclusion"] > 0 for d in drawn)
    db = open_database(traces.with_name("tr.ragreview.db"))
    for draw_id in (1, 2):
        (top,) = db.conn.execute(
            "SELECT r.id FROM review_draw_records d JOIN records r ON r.rowid = d.record "
            "WHERE d.draw = ? ORDER BY d.weight DESC LIMIT 1",
            (draw_id,),
        ).fetchone()
        assert top == "t5" or db.conn.execute(  # t5 not drawn at all this time
            "SELECT count(*) FROM review_draw_records WHERE draw = ? AND weight > 0.2",
            (draw_id,),
        ).fetchone() == (0,)


def test_metrics_json_estimate_on_a_real_fixture(factscore) -> None:
    drawn = _queue(factscore, "--strategy", "impact", "--n", "40", "--seed", "2")
    # review the first 6 in draw order, one of them with a changed fact label
    for d in drawn[:6]:
        quick("mark", str(factscore), d["id"], "--reviewed", "--reviewer", "ann")
    quick("label", str(factscore), drawn[0]["id"], "fact", "f1", "IR", "--reviewer", "ann")
    quick(
        "mark", str(factscore), drawn[10]["id"], "--reviewed", "--reviewer", "ann"
    )  # skipped ahead
    quick("settings", str(factscore), "estimate.target_halfwidth=0.05")
    out = json.loads(run("metrics", str(factscore), "--json").stdout)
    block = out["estimate"]
    assert block["draw"]["used"] == 6 and block["draw"]["reviewed_out_of_order"] == 1
    assert block["reviewed_outside_draw"] == 0 and block["target_halfwidth"] == 0.05
    m = block["metrics"]["longform.precision"]
    assert set(m) == {"estimate", "ci", "n_used", "lambda", "halfwidth", "more_reviews"}
    # recompute from what the other commands print: per-record values and the draw
    per = {
        json.loads(line)["id"]: json.loads(line)
        for line in run("metrics", str(factscore), "--per-record", "--json").stdout.splitlines()
    }
    db = open_database(factscore.with_name("fs.ragreview.db"))
    (tau_6,) = db.conn.execute("SELECT key FROM review_draw_records WHERE position = 6").fetchone()
    weights = {r[0]: r[2] for r in _draw_rows(factscore, 1)}
    judge = [p["judge"].get("longform.precision") for p in per.values()]
    defined = [v for v in judge if v is not None]
    used = []
    for d in drawn[:6]:
        f = per[d["id"]]["judge"].get("longform.precision")
        y = per[d["id"]]["effective"].get("longform.precision")
        if f is not None and y is not None:
            used.append((f, y, -math.expm1(-tau_6 * weights[d["id"]])))
    want = core_estimate.estimate(len(defined), sum(defined), used)
    assert m["n_used"] == len(used) and m["estimate"] == pytest.approx(want.estimate)
    assert m["ci"] == pytest.approx(list(want.ci))
    assert m["more_reviews"] == core_estimate.more_reviews(want, 0.05)
    assert out["estimate"]["more_reviews"] >= m["more_reviews"]
    # the rule at the top is the rates' (a count's half-width is on its own scale), and
    # no metric asks for more reviews than it has records left to review
    rates = [v["more_reviews"] for name, v in block["metrics"].items() if name not in COUNTS]
    assert out["estimate"]["more_reviews"] == max(r for r in rates if r is not None)
    supported = block["metrics"]["longform.supported"]
    assert supported["more_reviews"] <= len(defined) - supported["n_used"]
    # --target-halfwidth overrides the setting for one call; the table shows the block
    assert json.loads(run("metrics", str(factscore), "--json", "--target-halfwidth", "0.5")
                      .stdout)["estimate"]["target_halfwidth"] == 0.5  # fmt: skip
    text = run("metrics", str(factscore)).stdout
    assert "corrected estimate" in text and "target ±0.05" in text


def test_metrics_json_without_a_draw_has_null_estimates(traces) -> None:
    out = json.loads(run("metrics", str(traces), "--json").stdout)
    assert out["estimate"]["draw"] is None
    assert out["estimate"]["metrics"]["trace.relevance"] == {
        "estimate": None, "ci": None, "n_used": 0, "lambda": None, "halfwidth": None,
        "more_reviews": None,
    }  # fmt: skip


def test_queue_sized_by_the_target_halfwidth(factscore) -> None:
    proc = run("queue", str(factscore), "--target-halfwidth", "0.05", check=False)
    assert proc.returncode == 1 and "give --n" in proc.stderr
    drawn = _queue(factscore, "--n", "40", "--seed", "3")
    for d in drawn[:8]:
        quick("mark", str(factscore), d["id"], "--reviewed", "--reviewer", "ann")
    quick("label", str(factscore), drawn[0]["id"], "fact", "f1", "IR", "--reviewer", "ann")
    block = json.loads(run("metrics", str(factscore), "--json", "--target-halfwidth", "0.2")
                       .stdout)["estimate"]  # fmt: skip
    needed = max(m["n_used"] + m["more_reviews"] for name, m in block["metrics"].items()
                 if m["more_reviews"] is not None and name not in COUNTS)  # fmt: skip
    # sized by the target: the latest draw's strategy and seed, extended
    proc = run("queue", str(factscore), "--target-halfwidth", "0.2")
    assert f"(random, seed 3, expected {min(needed, 183)})" in proc.stderr
    new = proc.stdout.splitlines()
    common = min(len(new), len(drawn))  # nested: one draw is the start of the other
    assert common >= 8 and new[:common] == [d["id"] for d in drawn][:common]
    assert (
        json.loads(run("metrics", str(factscore), "--json").stdout)["estimate"]["draw"]["used"] == 8
    )  # the reviews of the old draw still count
    # a tiny target: every rate asks for all its records (157 have facts), no more
    block = json.loads(run("metrics", str(factscore), "--json", "--target-halfwidth", "0.001")
                       .stdout)["estimate"]  # fmt: skip
    needed = max(m["n_used"] + m["more_reviews"] for name, m in block["metrics"].items()
                 if m["more_reviews"] is not None and name not in COUNTS)  # fmt: skip
    assert needed <= 157
    proc = run("queue", str(factscore), "--target-halfwidth", "0.001")
    assert f"expected {needed})" in proc.stderr


def test_agreement_report_carries_the_estimate(factscore, tmp_path) -> None:
    drawn = _queue(factscore, "--n", "20", "--seed", "1")
    for d in drawn[:5]:
        quick("mark", str(factscore), d["id"], "--reviewed", "--reviewer", "ann")
    quick("label", str(factscore), drawn[1]["id"], "fact", "f2", "IR", "--reviewer", "ann")
    metrics_block = json.loads(run("metrics", str(factscore), "--json").stdout)["estimate"]
    html = tmp_path / "report.html"
    report = json.loads(run("agreement", str(factscore), "--json", "--html", str(html)).stdout)
    assert report["estimate"] == metrics_block  # one computation for both commands
    assert report["estimate"]["draw"]["used"] == 5
    page = html.read_text(encoding="utf-8")
    assert "Corrected estimate" in page and "longform.precision" in page
    text = run("agreement", str(factscore)).stdout
    assert "corrected estimate" in text and "draw 1 (random, seed 1): 5 of" in text


def test_target_halfwidth_setting(traces) -> None:
    out = run("settings", str(traces), "estimate.target_halfwidth=0.02").stdout
    assert "estimate.target_halfwidth=0.02" in out.splitlines()
    bad = run("settings", str(traces), "estimate.target_halfwidth=-1", check=False)
    assert bad.returncode == 1 and "positive number" in bad.stderr
    db = open_database(traces.with_name("tr.ragreview.db"))
    from ragreview.store import settings as store_settings

    # not a metric variant: gold sets and reports list the variants only
    assert "estimate.target_halfwidth" not in store_settings.get_all(db, "tr")
    assert store_settings.others(db, "tr") == {"estimate.target_halfwidth": 0.02}
    unset = run("settings", str(traces), "estimate.target_halfwidth=null").stdout
    assert "estimate.target_halfwidth" not in unset  # listed only while set


def test_impact_draws_by_size_where_random_does_not(tmp_path) -> None:
    # issue 28: one family, every fact supported (every value 1): only the sizes differ.
    # Sizes (judge labels) 24, 6 and four of 2 (Σ 38): impact scores 24/38, 6/38, 2/38.
    sizes = {"big": 24, "mid": 6, "s1": 2, "s2": 2, "s3": 2, "s4": 2}
    records = [fact_record(rid, {f"f{i}": "S" for i in range(k)}) for rid, k in sizes.items()]
    path = write_jsonl(tmp_path / "sizes.jsonl", records)
    quick("import", str(path))
    db = open_database(tmp_path / "sizes.ragreview.db")
    from ragreview.services import queue_draws as review_draws

    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records ORDER BY position")]
    assert review_draws.scores(db, "sizes", "impact", rowids) == pytest.approx(
        [24 / 38, 6 / 38, 2 / 38, 2 / 38, 2 / 38, 2 / 38]
    )
    ids = dict(db.conn.execute("SELECT rowid, id FROM records"))

    def leaders(strategy: str) -> list[str]:
        draws = [review_draws.draw(db, "sizes", strategy, 1, seed) for seed in range(200)]
        return [ids[d.members[0].record] for d in draws if d.members]

    impact, uniform = leaders("impact"), leaders("random")
    # weights 0.8 · score + 0.2 / 6: big 0.539, mid 0.160, each small 0.075
    assert (
        impact.count("big") > impact.count("mid") > max(impact.count(f"s{i}") for i in range(1, 5))
    )
    assert impact.count("big") > 2 * uniform.count("big")
    assert impact != uniform
    # one seed, both strategies: different records
    first = _queue(path, "--strategy", "impact", "--n", "2", "--seed", "5")
    other = _queue(path, "--strategy", "random", "--n", "2", "--seed", "5")
    assert [d["id"] for d in first] != [d["id"] for d in other]
