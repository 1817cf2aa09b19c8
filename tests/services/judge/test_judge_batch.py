"""`judge --batch` then `judge --collect` through Files + Batches on a local server."""

from __future__ import annotations

import json

from ragreview.store import judge_store, open_database

from .helpers import EXPECTED_TRACE, SECRET, db_layers, judge_args, ragreview


def test_batch_submit_and_collect_round_trip(judge_server, trace_file, tmp_path):
    submitted = ragreview(*judge_args(trace_file, judge_server, "--batch"))
    assert submitted.returncode == 0, submitted.stderr
    assert "batch batch-1: validating, 8 requests" in submitted.stdout
    assert judge_server.state.chat_count() == 0
    (upload,) = [r for r in judge_server.state.requests if r["path"] == "/v1/files"]
    assert b'name="purpose"\r\n\r\nbatch' in upload["body"]
    lines = [json.loads(x) for x in judge_server.state.files["file-1"].splitlines()]
    assert len(lines) == 8 and lines[0]["url"] == "/v1/chat/completions"
    assert lines[0]["body"]["model"] == "judge-test"

    twice = ragreview(*judge_args(trace_file, judge_server, "--batch"))
    assert twice.returncode == 1
    assert "batch batch-1 is not collected yet" in twice.stderr
    assert len(judge_server.state.batches) == 1

    waiting = ragreview("judge", str(trace_file), "--collect", "--base-url", judge_server.base_url)
    assert waiting.returncode == 0, waiting.stderr
    assert waiting.stdout.strip() == "batch batch-1: validating"

    judge_server.inject("malformed", match="number 4?")
    judge_server.inject("500", match="number 5?")
    judge_server.complete_batches()
    collected = ragreview(
        "judge", str(trace_file), "--collect", "--base-url", judge_server.base_url
    )
    assert collected.returncode == 1, collected.stderr  # two records failed
    assert "batch batch-1: completed, 6 labelled, 2 errors" in collected.stdout
    assert "Error: 2 records could not be labelled" in collected.stderr

    db_path = trace_file.with_suffix(".ragreview.db")
    layers = db_layers(db_path)
    assert layers["q4"] == {} and layers["q5"] == {}
    assert all(layers[f"q{i}"] == EXPECTED_TRACE for i in (0, 1, 2, 3, 6, 7))
    db = open_database(db_path)
    errors = {e.record: e.message for e in judge_store.iter_errors(db, unresolved=True)}
    assert errors["q4"].startswith("invalid output:") and errors["q5"] == "injected"
    run = dict(
        zip(
            ("status", "labelled", "errors"),
            db.conn.execute(
                "SELECT status, labelled, errors FROM judge_runs WHERE mode = 'batch'"
            ).fetchone(),
        )
    )
    assert run == {"status": "finished", "labelled": 6, "errors": 2}
    db.conn.close()

    again = ragreview("judge", str(trace_file), "--collect", "--base-url", judge_server.base_url)
    assert again.stdout.strip() == "no batch is waiting to be collected"

    # the batch replies fill the cache: an online run asks only for the two failures
    online = ragreview(*judge_args(trace_file, judge_server))
    assert "8 labelled (6 from cache), 0 errors" in online.stdout
    assert judge_server.state.chat_count() == 2
    assert all(layer == EXPECTED_TRACE for layer in db_layers(db_path).values())
    for path in tmp_path.iterdir():
        assert SECRET.encode() not in path.read_bytes()


def test_an_expired_batch_keeps_what_finished_and_reports_the_rest(judge_server, trace_db):
    from ragreview.services.judge import JudgeConfig
    from ragreview.services.judge.batch import collect, submit

    cfg = JudgeConfig(model="judge-test", base_url=judge_server.base_url, task="trace")
    run_id, stats, reports = submit(trace_db, "trace", cfg)
    assert [(r.status, r.requests) for r in reports] == [("validating", 8)]
    assert judge_store.get_run(trace_db, run_id)["status"] == "submitted"
    judge_server.complete_batches(status="expired", drop="number 3?")
    stats, reports = collect(trace_db, "trace", cfg)
    assert [(r.status, r.labelled, r.errors) for r in reports] == [("expired", 7, 1)]
    (error,) = judge_store.iter_errors(trace_db, unresolved=True)
    assert (error.record, error.message, error.run) == ("q3", "batch expired: no reply", run_id)
    assert judge_store.get_run(trace_db, run_id)["status"] == "finished"
    assert judge_store.pending_batches(trace_db, "trace") == []
