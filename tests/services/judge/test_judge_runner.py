"""The judge runner against a real local HTTP server with the real openai client."""

from __future__ import annotations

import pytest

from ragreview.services.judge import JudgeAbort, JudgeConfig, rejudge_record, run
from ragreview.services.judge.client import backoff_delay, retry_after
from ragreview.store import history, judge_store
from ragreview.store import records as store_records

from .helpers import EXPECTED_TRACE, write_jsonl


def config(server, **kw) -> JudgeConfig:
    base = dict(
        model="judge-test",
        base_url=server.base_url,
        task="trace",
        concurrency=3,
        max_retries=3,
        timeout=5.0,
        backoff_base=0.01,
        backoff_max=0.05,
    )
    base.update(kw)
    return JudgeConfig(**base)


def judge_layers(db) -> dict[str, dict]:
    return {s.id: s.judge for s in store_records.iterate(db, "trace")}


def test_labels_every_record_and_a_rerun_makes_no_request(judge_server, trace_db):
    run_id, stats = run(trace_db, "trace", config(judge_server))
    assert judge_server.state.chat_count() == 8
    assert (stats.labelled, stats.errors, stats.cached, stats.requests) == (8, 0, 0, 8)
    assert all(layer == EXPECTED_TRACE for layer in judge_layers(trace_db).values())
    runs = {r for (r,) in trace_db.conn.execute("SELECT DISTINCT run FROM judge_labels")}
    assert runs == {run_id}
    row = judge_store.get_run(trace_db, run_id)
    assert row["status"] == "finished" and row["model"] == "judge-test"
    assert row["prompt_tokens"] == stats.prompt_tokens > 0

    run_id2, stats2 = run(trace_db, "trace", config(judge_server))
    assert judge_server.state.chat_count() == 8  # zero new requests
    assert (stats2.cached, stats2.requests, stats2.labelled) == (8, 0, 8)
    assert all(layer == EXPECTED_TRACE for layer in judge_layers(trace_db).values())


def test_human_labels_and_events_are_never_touched(judge_server, trace_db):
    stored = store_records.find(trace_db, "q3", "trace")
    history.set_label(trace_db, stored.rowid, "relevant", "0b", True, "ann")
    before_events = trace_db.conn.execute("SELECT * FROM events").fetchall()
    before_human = trace_db.conn.execute("SELECT * FROM human_labels").fetchall()
    run(trace_db, "trace", config(judge_server))
    assert trace_db.conn.execute("SELECT * FROM events").fetchall() == before_events
    assert trace_db.conn.execute("SELECT * FROM human_labels").fetchall() == before_human
    after = store_records.find(trace_db, "q3", "trace")
    assert after.judge == EXPECTED_TRACE and after.human == {"relevant": {"0b": True}}


def test_survives_429_500_timeouts_and_malformed_output(judge_server, trace_db):
    judge_server.inject("429", match="number 1?", retry_after="1")
    judge_server.inject("500", match="number 2?", times=2)
    judge_server.inject("slow", match="number 3?", delay=2.0)
    judge_server.inject("malformed", match="number 4?", times=2)
    judge_server.inject("bad-json-body", match="number 7?")
    _, stats = run(trace_db, "trace", config(judge_server, timeout=0.5))
    assert (stats.labelled, stats.errors) == (8, 0)
    assert judge_server.state.chat_count() == 8 + 1 + 2 + 1 + 2 + 1 == stats.requests
    assert all(layer == EXPECTED_TRACE for layer in judge_layers(trace_db).values())
    # Retry-After: 1 was honoured (our own backoff would have waited ≤ 0.05 s)
    times = [
        r["at"]
        for r, prompt in zip(
            (r for r in judge_server.state.requests if r["path"].endswith("/chat/completions")),
            judge_server.state.chat_prompts,
        )
        if "number 1?" in prompt
    ]
    assert len(times) == 2 and times[1] - times[0] >= 1.0
    # the malformed replies were followed by a corrective turn, not a blind repeat
    corrective = [
        r for r in judge_server.state.requests if b"could not be used" in r.get("body", b"")
    ]
    assert len(corrective) == 2


def test_exhausted_retries_become_per_record_errors(judge_server, trace_db):
    judge_server.inject("500", match="number 5?", times=100)
    judge_server.inject("malformed", match="number 6?", times=100)
    judge_server.inject("bad-json-body", match="number 7?", times=100)
    run_id, stats = run(trace_db, "trace", config(judge_server, max_retries=2))
    assert (stats.labelled, stats.errors) == (5, 3)
    layers = judge_layers(trace_db)
    assert layers["q5"] == {} and layers["q6"] == {} and layers["q0"] == EXPECTED_TRACE
    errors = {e.record: e for e in judge_store.iter_errors(trace_db, dataset="trace")}
    assert set(errors) == {"q5", "q6", "q7"}
    assert errors["q7"].message == (
        "unreadable response from the server (JSONDecodeError) after 3 attempts"
    )
    assert errors["q5"].message == "HTTP 500: injected 500 after 3 attempts"
    assert errors["q6"].message.startswith("invalid output: the reply holds no JSON object")
    assert errors["q5"].run == run_id and errors["q5"].task == "trace"
    assert judge_store.get_run(trace_db, run_id)["errors"] == 3

    # the next run labels them and marks the errors resolved; nothing else is asked again
    judge_server.state.rules.clear()
    calls = judge_server.state.chat_count()
    run_id2, stats2 = run(trace_db, "trace", config(judge_server))
    assert judge_server.state.chat_count() - calls == 3
    assert (stats2.labelled, stats2.cached, stats2.errors) == (8, 5, 0)
    assert judge_store.iter_errors(trace_db, dataset="trace", unresolved=True) == []
    assert {e.resolved for e in judge_store.iter_errors(trace_db)} == {run_id2}


def test_only_missing_skips_labelled_records(judge_server, trace_db):
    judge_server.inject("500", match="number 5?", times=100)
    run(trace_db, "trace", config(judge_server, max_retries=0))
    judge_server.state.rules.clear()
    calls = judge_server.state.chat_count()
    _, stats = run(trace_db, "trace", config(judge_server, only_missing=True, use_cache=False))
    assert judge_server.state.chat_count() - calls == 1
    assert (stats.labelled, stats.skipped) == (1, 7)


def test_a_refused_key_aborts_the_run(judge_server, trace_db):
    judge_server.inject("401", times=100)
    with pytest.raises(JudgeAbort, match="HTTP 401"):
        run(trace_db, "trace", config(judge_server))
    (status,) = trace_db.conn.execute("SELECT status FROM judge_runs").fetchone()
    assert status == "aborted"
    assert judge_layers(trace_db)["q0"] == {}


def test_rejudge_record_asks_again_despite_the_cache(judge_server, trace_db):
    run(trace_db, "trace", config(judge_server))
    rowid = store_records.find(trace_db, "q2", "trace").rowid
    run_id, stats = rejudge_record(
        trace_db, rowid, "judge-test", judge_server.base_url, "trace", backoff_base=0.01
    )
    assert judge_server.state.chat_count() == 9 and stats.labelled == 1
    assert judge_store.label_runs(trace_db, rowid) == dict.fromkeys(EXPECTED_TRACE, run_id)


def test_no_key_and_no_endpoint_is_a_clear_error(trace_db):
    with pytest.raises(JudgeAbort, match="set OPENAI_API_KEY"):
        run(trace_db, "trace", JudgeConfig(model="m"))
    assert trace_db.conn.execute("SELECT count(*) FROM judge_runs").fetchone() == (0,)


@pytest.mark.parametrize(
    "attempt, server_wait, expected",
    [
        (0, None, (0.5, 1.0)),  # base 1 s, equal jitter: between half and all of it
        (3, None, (4.0, 8.0)),
        (10, None, (30.0, 60.0)),  # capped at backoff_max
        (0, 7.0, (7.0, 7.7)),  # Retry-After wins, plus up to 10 %
        (0, 5000.0, (120.0, 120.0)),  # an absurd Retry-After is capped, jitter too
        (0, 115.0, (115.0, 120.0)),
    ],
)
def test_backoff_delay_bounds(attempt, server_wait, expected):
    cfg = JudgeConfig(model="m")
    low = backoff_delay(attempt, server_wait, cfg, rng=lambda a, b: a)
    high = backoff_delay(attempt, server_wait, cfg, rng=lambda a, b: b)
    assert (low, high) == pytest.approx(expected)


def test_retry_after_header_forms():
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "3"}) == 0.25
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # past
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_auto_task_labels_every_kind_of_record(judge_server, tmp_path):
    from ragreview.store import open_database
    from tests.services.judge.helpers import import_into

    records = [
        {
            "id": "m-yes",
            "task": "mtrag",
            "conversation": [{"speaker": "user", "text": "X?"}],
            "response": [["a", "Sorry, I don't know."]],
        },
        {"id": "m-no", "task": "mtrag", "question": "Y?", "response": [["a", "It is Y."]]},
        {
            "id": "rgb-noise",
            "task": "rgb-noise",
            "question": "Who?",
            "documents": [{"sentences": [["0a", "Ernaux won."]]}],
            "response": [["a", "I can not answer because of the insufficient information."]],
        },
        {
            "id": "rgb-fact",
            "task": "rgb-counterfactual",
            "question": "Who?",
            "counterfactual": ["Someone"],
            "documents": [{"sentences": [["0a", "Someone won."]]}],
            "response": [["a", "There are factual errors in the provided documents."]],
        },
        {
            "id": "bio-rated",
            "task": "longform",
            "response": [["a", "Ada was English."]],
            "facts": [["f1", "Ada was English.", "a"], ["f2", "Ada was born.", "a"]],
        },
        {
            "id": "bio-split",
            "task": "longform",
            "question": "Bio?",
            "response": [["a", "Ada was born in 1815."], ["b", "She flew to Mars."]],
        },
        {"id": "other", "task": "ragas", "response": [["a", "x"]]},
    ]
    path = write_jsonl(tmp_path / "mixed.jsonl", records)
    db = open_database(tmp_path / "mixed.db")
    import_into(db, path, "mixed")
    _, stats = run(db, "mixed", config(judge_server, task="auto"))
    assert (stats.labelled, stats.skipped, stats.errors) == (6, 1, 0)
    got = {
        s.id: (s.judge, [list(f.__dict__.values()) for f in s.record.facts])
        for s in store_records.iterate(db, "mixed")
    }
    assert got["m-yes"][0] == {"idk": {"*": 1}} and got["m-no"][0] == {"idk": {"*": 0}}
    assert got["rgb-noise"][0] == {"rejected": {"*": True}}
    assert got["rgb-fact"][0] == {"rejected": {"*": False}, "error_detected": {"*": True}}
    assert got["bio-rated"][0] == {"fact": {"f1": "S", "f2": "S"}}
    assert got["bio-split"] == (
        {"fact": {"f1": "S", "f2": "NS"}},
        [["f1", "Ada was born in 1815.", "a"], ["f2", "She flew to Mars.", "b"]],
    )
    assert got["other"][0] == {}


def test_metrics_follow_from_the_judge_labels(judge_server, trace_db):
    """Active once the metrics engine is merged: per-record TRACe from the new labels."""
    pytest.importorskip("ragreview.core.metrics")
    from ragreview.store import metric_reads, metric_summary_reads

    run(trace_db, "trace", config(judge_server))
    # 5 document sentences, R = {0a, 1a}, U = {0a}, response sentence b unsupported
    expected = {
        "trace.relevance": 2 / 5,
        "trace.utilization": 1 / 5,
        "trace.completeness": 1 / 2,
        "trace.adherence": 0.0,
    }
    for stored in store_records.iterate(trace_db, "trace"):
        values = metric_reads.record_values(trace_db, stored.rowid)["judge"]
        assert {k: values[k] for k in expected} == pytest.approx(expected)
    summary = metric_summary_reads.dataset_summary(trace_db, "trace")
    assert {k: summary["judge"][k] for k in expected} == pytest.approx(expected)
