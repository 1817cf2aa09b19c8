"""A hostile judge endpoint: replies of the wrong shape, runs where records fail, an
absurd Retry-After, escape sequences in its messages. The real openai client talks to
the local 127.0.0.1 server of judge_server.py."""

from __future__ import annotations

import json
import time

import pytest

from ragreview.services.judge import run
from ragreview.store import judge_store

from .helpers import EXPECTED_TRACE, judge_args, ragreview
from .test_judge_runner import config, judge_layers


def completion_body(**override) -> dict:
    body = {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "created": 0,
        "model": "judge-test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}}],
    }
    body.update(override)
    return body


MALFORMED = {
    "number 1?": completion_body(choices=[{"index": 0, "message": None}]),
    "number 2?": completion_body(choices="oops"),
    "number 3?": completion_body(choices=[None]),
    "number 4?": completion_body(choices=[{"index": 0, "message": {"content": 42}}]),
    "number 5?": completion_body(usage={"prompt_tokens": "many", "completion_tokens": None}),
    "number 6?": ["not", "an", "object"],
    "number 7?": completion_body(usage={"prompt_tokens": float("nan"), "completion_tokens": 1e999}),
}


def test_malformed_replies_are_that_records_error_not_the_runs(judge_server, trace_db):
    for match, body in MALFORMED.items():
        judge_server.inject("reply", match=match, times=100, body=body)
    run_id, stats = run(trace_db, "trace", config(judge_server, max_retries=1))
    assert (stats.labelled, stats.errors) == (1, 7)
    layers = judge_layers(trace_db)
    assert layers["q0"] == EXPECTED_TRACE
    errors = {e.record: e.message for e in judge_store.iter_errors(trace_db, dataset="trace")}
    assert set(errors) == {f"q{i}" for i in range(1, 8)}
    assert (
        errors["q1"]
        == "malformed reply from the server: choices[0] has no message after 2 attempts"
    )
    assert errors["q2"].startswith("malformed reply from the server: choices is not a list")
    assert errors["q4"].startswith(
        "malformed reply from the server: the message content is not text"
    )
    assert errors["q5"].startswith("invalid output:")  # a reply of the right shape, bad JSON
    assert judge_store.get_run(trace_db, run_id)["status"] == "finished"


def test_a_run_with_failed_records_exits_non_zero(judge_server, trace_file):
    judge_server.inject("reply", times=1000, body=completion_body(choices="oops"))
    proc = ragreview(*judge_args(trace_file, judge_server, "--max-retries", "0"))
    assert proc.returncode == 1
    assert "0 labelled (0 from cache), 8 errors" in proc.stdout
    assert proc.stderr.strip().splitlines()[-1] == "Error: 8 records could not be labelled"
    assert "Traceback" not in proc.stderr


def test_an_absurd_retry_after_is_capped_and_the_wait_is_told(judge_server, trace_db):
    judge_server.inject("429", match="number 2?", retry_after="100000")
    waits: list[tuple[float, str]] = []
    cfg = config(judge_server, retry_after_max=2.5)
    start = time.monotonic()
    _, stats = run(trace_db, "trace", cfg, on_wait=lambda s, why: waits.append((s, why)))
    assert time.monotonic() - start < 15
    assert (stats.labelled, stats.errors) == (8, 0)
    assert waits == [(2.5, "HTTP 429: injected 429")]


def test_the_cli_shows_a_server_requested_wait(judge_server, trace_file):
    judge_server.inject("429", match="number 2?", retry_after="3")
    proc = ragreview(*judge_args(trace_file, judge_server))
    assert proc.returncode == 0, proc.stderr
    assert "waiting 3 s before a retry (HTTP 429: injected 429)" in proc.stderr


@pytest.mark.parametrize("as_json", [False, True])
def test_escape_sequences_in_judge_messages_never_reach_the_terminal(
    judge_server, trace_file, as_json
):
    hostile = "boom\x1b]0;pwned\x07\x1b[2J\x9b31m"
    judge_server.inject("500", match="number 3?", times=100, message=hostile)
    proc = ragreview(*judge_args(trace_file, judge_server, "--max-retries", "0"))
    assert proc.returncode == 1
    log = ragreview("log", str(trace_file), "--errors", *(["--json"] if as_json else []))
    assert log.returncode == 0, log.stderr
    if as_json:  # the exact text, escaped by JSON
        (err,) = [json.loads(line) for line in log.stdout.splitlines()]
        assert err["message"] == f"HTTP 500: {hostile}"
    else:
        assert "HTTP 500: boom" in log.stdout
    for ch in ("\x1b", "\x07", "\x9b"):
        assert ch not in proc.stdout + proc.stderr + log.stdout


def test_retries_after_429_and_500_are_counted_and_told(judge_server, trace_db, trace_file):
    judge_server.inject("429", match="number 1?", retry_after="0")
    judge_server.inject("500", match="number 2?", times=2)
    _, stats = run(trace_db, "trace", config(judge_server))
    assert (stats.labelled, stats.errors, stats.retries) == (8, 0, 3)
    assert stats.retried == {"429": 1, "500": 2}
    assert stats.retry_summary() == "3 retries (429 ×1, 500 ×2)"
    # the CLI's summary line says so too (its progress bar shows the same words)
    judge_server.inject("500", match="number 3?", times=1)
    proc = ragreview(*judge_args(trace_file, judge_server, "--no-cache"))
    assert proc.returncode == 0, proc.stderr
    assert "; 1 retry (500 ×1)" in proc.stdout, proc.stdout
