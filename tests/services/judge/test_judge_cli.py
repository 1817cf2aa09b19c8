"""`ragreview judge` end to end: the CLI (in process, and as a real process for the usage
errors and the interrupt), a real SQLite file, a local server."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from ragreview.store import judge_store, open_database

from .helpers import EXPECTED_TRACE, SECRET, db_layers, env, judge_args, ragreview


def test_judge_labels_reruns_free_and_never_leaks_the_key(judge_server, trace_file, tmp_path):
    first = ragreview(*judge_args(trace_file, judge_server, "--price-in", "2", "--price-out", "8"))
    assert first.returncode == 0, first.stderr
    assert "8 labelled (0 from cache), 0 errors, 0 skipped; 8 requests" in first.stdout
    assert "est. cost $" in first.stdout
    assert {r["auth"] for r in judge_server.state.requests} == {f"Bearer {SECRET}"}

    second = ragreview(*judge_args(trace_file, judge_server))
    assert second.returncode == 0, second.stderr
    assert "8 labelled (8 from cache), 0 errors, 0 skipped; 0 requests" in second.stdout
    assert judge_server.state.chat_count() == 8

    db_path = trace_file.with_suffix(".ragreview.db")
    assert all(layer == EXPECTED_TRACE for layer in db_layers(db_path).values())
    export = ragreview("export", str(db_path), "--out", str(tmp_path / "out.jsonl"))
    log = ragreview("log", str(db_path), "--errors", "--json")
    outputs = [first, second, export, log]
    for proc in outputs:
        assert SECRET not in proc.stdout + proc.stderr
    files = [p for p in tmp_path.iterdir() if p.is_file()]
    assert db_path in files
    assert b"judge-test" in db_path.read_bytes()  # the grep sees stored text (control)
    for path in files:  # the DB, its -wal/-shm if any, the export
        assert SECRET.encode() not in path.read_bytes(), path


def test_errors_show_in_log_and_json_log_keeps_its_shape(judge_server, trace_file):
    judge_server.inject("500", match="number 5?", times=100, echo_auth=True)
    proc = ragreview(*judge_args(trace_file, judge_server, "--max-retries", "1"))
    assert proc.returncode == 1, proc.stderr  # a record failed: the run did not succeed
    assert "7 labelled (0 from cache), 1 errors" in proc.stdout
    assert proc.stderr.strip().endswith("Error: 1 records could not be labelled")
    assert "ragreview log" in proc.stderr and "--errors" in proc.stderr

    text = ragreview("log", str(trace_file))
    assert "judge judge-test  trace   q5" in text.stdout
    assert "HTTP 500: injected 500 for Bearer *** after 2 attempts" in text.stdout
    assert SECRET not in text.stdout
    assert SECRET.encode() not in trace_file.with_suffix(".ragreview.db").read_bytes()
    events_only = ragreview("log", str(trace_file), "--json")
    assert events_only.stdout == ""  # no human event yet, and no judge line mixed in
    errors = [
        json.loads(line)
        for line in ragreview("log", str(trace_file), "--errors", "--json").stdout.splitlines()
    ]
    assert [(e["kind"], e["record"], e["task"], e["resolved"]) for e in errors] == [
        ("judge_error", "q5", "trace", None)
    ]


def test_dry_run_prints_prompts_and_calls_nothing(judge_server, trace_file):
    proc = ragreview(*judge_args(trace_file, judge_server, "--dry-run"), key=None)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("=== q") == 8 and "Question number 7?" in proc.stdout
    assert judge_server.state.requests == []


def test_prompt_file_replaces_the_template(judge_server, trace_file, tmp_path):
    custom = tmp_path / "mine.txt"
    custom.write_text(
        "MY PROMPT all_relevant_sentence_keys\n```\n{documents}\n```\n```\n{question}\n```\n```\n{response}\n```\n"
    )
    proc = ragreview(*judge_args(trace_file, judge_server, "--prompt", str(custom)))
    assert proc.returncode == 0, proc.stderr
    assert all(p.startswith("MY PROMPT") for p in judge_server.state.chat_prompts)
    assert len(judge_server.state.chat_prompts) == 8


def test_usage_errors_are_one_line(judge_server, trace_file):
    # a real process: its stderr is what the user sees, traceback included if any
    no_model = ragreview("judge", str(trace_file), real_process=True)
    assert no_model.returncode == 2 and "--model is required" in no_model.stderr
    no_key = ragreview("judge", str(trace_file), "--model", "m", key=None, real_process=True)
    assert no_key.returncode == 1
    assert "Error: no API key: set OPENAI_API_KEY" in no_key.stderr
    assert "Traceback" not in no_key.stderr
    judge_server.inject("401", times=100)
    refused = ragreview(*judge_args(trace_file, judge_server))
    assert refused.returncode == 1 and "HTTP 401" in refused.stderr
    assert "Traceback" not in refused.stderr


def _ctrl_c_as_a_terminal_gives_it() -> None:
    """The child starts with SIGINT's default action, as from a shell. A child inherits
    an ignored SIGINT, and Python then never raises KeyboardInterrupt: in two CI runs
    the xdist worker had SIGINT ignored when this test ran (set by no ragreview code:
    a check of every test's before/after found none; see the closing note), and the
    child sat through the Ctrl-C until the timeout."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_an_interrupted_run_resumes_without_repeating_finished_calls(judge_server, trace_file):
    judge_server.state.hold_after = 2  # the third call hangs until we interrupt
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ragreview",
            *judge_args(trace_file, judge_server, "--concurrency", "1"),
        ],
        env=env(OPENAI_API_KEY=SECRET),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ctrl_c_as_a_terminal_gives_it,
    )
    deadline = time.monotonic() + 60
    while judge_server.state.chat_count() < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert judge_server.state.chat_count() == 3
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    judge_server.state.release.set()

    db_path = trace_file.with_suffix(".ragreview.db")
    layers = db_layers(db_path)
    finished = [rid for rid, layer in layers.items() if layer]
    assert finished == ["q0", "q1"]
    db = open_database(db_path)
    (run_row,) = db.conn.execute("SELECT id FROM judge_runs").fetchall()
    assert judge_store.get_run(db, run_row[0])["status"] == "interrupted"
    db.conn.close()

    judge_server.state.hold_after = None
    first_prompts = list(judge_server.state.chat_prompts)
    resumed = ragreview(*judge_args(trace_file, judge_server, "--concurrency", "1"))
    assert resumed.returncode == 0, resumed.stderr
    assert "8 labelled (2 from cache)" in resumed.stdout
    new_prompts = judge_server.state.chat_prompts[len(first_prompts) :]
    assert len(new_prompts) == 6
    assert not set(new_prompts) & set(first_prompts[:2])  # finished calls are not repeated
    assert all(layer == EXPECTED_TRACE for layer in db_layers(db_path).values())
