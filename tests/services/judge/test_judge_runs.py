"""Judge runs side by side (docs/agreement.md, Judge runs): the same records judged
twice through the local server with two prompts; both runs kept, scored together,
and switching the active one moves the metrics and nothing of the human layer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragreview.cli import cli
from ragreview.services.judge.tasks import default_template
from ragreview.store import open_database, run_layers

from .helpers import EXPECTED_TRACE, db_layers, judge_args, write_jsonl
from .judge_server import TOKEN_LOGPROBS

DOUBTFUL = {  # what the oracle answers to the "DOUBT EVERYTHING" prompt
    "relevant": {"0a": True, "1a": True},
    "supported": {"a": False, "b": False},
    "support_keys": {"a": [], "b": []},
}


@pytest.fixture
def cli_run(tmp_path: Path):
    runner = CliRunner(env={"USER": "tester", "HOME": str(tmp_path)})

    def invoke(*args: str) -> str:
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    return invoke


def human_layer(db_path: Path) -> tuple[list, list]:
    db = open_database(db_path)
    try:
        return (
            db.conn.execute("SELECT * FROM human_labels ORDER BY 1, 2, 3").fetchall(),
            db.conn.execute("SELECT * FROM events ORDER BY id").fetchall(),
        )
    finally:
        db.conn.close()


def test_two_prompts_two_runs_scored_side_by_side_and_switchable(
    judge_server, trace_file, tmp_path, cli_run
):
    path, db_path = str(trace_file), trace_file.with_suffix(".ragreview.db")
    cli_run(*judge_args(trace_file, judge_server, "--logprobs"))
    # a reviewer: q0's sentence a is not supported; q0 and q1 reviewed
    cli_run("label", path, "q0", "supported", "a", "false")
    cli_run("mark", path, "q0", "--reviewed")
    cli_run("mark", path, "q1", "--reviewed")
    doubt = tmp_path / "doubt.txt"
    doubt.write_text("DOUBT EVERYTHING\n" + default_template("trace"))
    cli_run(*judge_args(trace_file, judge_server, "--prompt", str(doubt)))
    assert judge_server.state.chat_count() == 16  # a new prompt is no cache hit

    runs = [json.loads(line) for line in cli_run("runs", path, "--json").splitlines()]
    first, second = runs
    assert [r["active"] for r in runs] == [False, True]
    assert first["prompt_hash"] != second["prompt_hash"]
    assert first["params"]["logprobs"] is True and second["params"]["logprobs"] is False
    assert (first["records"], second["records"]) == (8, 8)
    assert (first["labels"], second["labels"]) == (8 * 7, 8 * 6)
    assert (first["logprobs"], second["logprobs"]) == (16, 0)  # one per supported verdict
    db = open_database(db_path)
    logprobs = dict(
        db.conn.execute(
            "SELECT target, logprob FROM run_labels l JOIN records r ON r.rowid = l.record "
            "WHERE l.run = ? AND r.id = 'q3' AND l.name = 'supported'",
            (first["id"],),
        ).fetchall()
    )
    assert logprobs == {"a": TOKEN_LOGPROBS["true"], "b": TOKEN_LOGPROBS["false"]}
    stored_prompt = db.conn.execute(
        "SELECT prompt FROM judge_runs WHERE id = ?", (second["id"],)
    ).fetchone()[0]
    assert json.loads(stored_prompt)["trace"].startswith("DOUBT EVERYTHING")
    db.conn.close()
    assert all(layer == DOUBTFUL for layer in db_layers(db_path).values())

    report = json.loads(cli_run("agreement", path, "--runs", "--json"))
    assert [r["id"] for r in report["runs"]] == [first["id"], second["id"]]
    assert report["records"] == 2 and report["active"] == second["id"]
    by_id = {r["id"]: r for r in report["runs"]}
    # truth under the second run: every sentence of q0 and q1 unsupported
    assert by_id[second["id"]]["labels"]["supported"]["confusion"] == {
        "tp": 0, "fp": 0, "fn": 0, "tn": 4
    }  # fmt: skip
    assert by_id[first["id"]]["labels"]["supported"]["confusion"] == {
        "tp": 0, "fp": 2, "fn": 0, "tn": 2
    }  # fmt: skip
    assert set(by_id[first["id"]]["metrics"]) == set(by_id[second["id"]]["metrics"])
    # the active run's row is the main report's numbers
    main = json.loads(cli_run("agreement", path, "--json"))
    assert by_id[second["id"]]["labels"] == main["labels"]
    assert by_id[second["id"]]["metrics"] == main["metrics"]
    text = cli_run("agreement", path, "--runs")
    assert first["id"] in text and second["id"] in text

    # the review queue reads the same run layers: the items the runs split on, and the
    # first run's verdict log-probabilities
    drawn = cli_run("queue", path, "--strategy", "runs-disagree", "--n", "3", "--json")
    members = [json.loads(line) for line in drawn.splitlines() if line.startswith("{")]
    assert members and all(m["inclusion"] > 0 for m in members)
    cli_run("queue", path, "--strategy", "uncertainty", "--n", "3", "--json")

    human_before = human_layer(db_path)
    metrics_second = json.loads(cli_run("metrics", path, "--json"))
    assert "is now the active" in cli_run("runs", "use", path, first["id"][:-2])
    metrics_first = json.loads(cli_run("metrics", path, "--json"))
    assert metrics_first["judge"] != metrics_second["judge"]
    assert all(layer == EXPECTED_TRACE for layer in db_layers(db_path).values())
    assert human_layer(db_path) == human_before
    assert "was already" in cli_run("runs", "use", path, first["id"])

    report = json.loads(cli_run("agreement", path, "--runs", "--json"))
    block = {r["id"]: r for r in report["runs"]}[first["id"]]["labels"]["supported"]
    # truth now takes the first run's accepted values: q1 a is supported
    assert block["confusion"] == {"tp": 1, "fp": 1, "fn": 0, "tn": 2}
    assert block["kappa"] == pytest.approx(0.5) and block["tnr"] == pytest.approx(2 / 3)

    cli_run("runs", "use", path, second["id"])
    back = json.loads(cli_run("metrics", path, "--json"))  # (sums rebuilt: last bits differ)
    for layer in ("judge", "effective"):
        assert back[layer] == pytest.approx(metrics_second[layer], abs=1e-12)
    assert human_layer(db_path) == human_before


def test_rejudging_one_record_keeps_the_runs_below_it(judge_server, trace_db):
    """A run that labels one record goes on top of the layer; switching away and back
    gives the same judge layer (the other records come from the earlier run)."""
    from ragreview.services.judge import JudgeConfig, rejudge_record, run

    first, _ = run(trace_db, "trace", JudgeConfig("judge-test", judge_server.base_url))
    (q2,) = trace_db.conn.execute("SELECT rowid FROM records WHERE id = 'q2'").fetchone()
    template = "DOUBT EVERYTHING\n" + default_template("trace")
    second, _ = rejudge_record(
        trace_db, q2, "judge-test", judge_server.base_url, "trace", templates={"trace": template}
    )
    layers = {s: {} for s in ("q0", "q2")}
    for rid in layers:
        (rowid,) = trace_db.conn.execute(
            "SELECT rowid FROM records WHERE id = ?", (rid,)
        ).fetchone()
        layers[rid] = rowid
    assert run_layers.active(trace_db, "trace") == second
    assert run_layers.disagreements(trace_db, layers["q2"]) == {
        ("supported", "a"),
        ("support_keys", "a"),
        ("utilized", "0a"),  # absent in the second run: not used (the default)
    }
    assert run_layers.disagreements(trace_db, layers["q0"]) == set()
    flagged = trace_db.conn.execute(
        f"SELECT r.id FROM records r WHERE r.dataset = 'trace' AND {run_layers.runs_disagree_sql()}"
    ).fetchall()
    assert flagged == [("q2",)]
    before = trace_db.conn.execute("SELECT * FROM judge_labels ORDER BY 1, 2, 3").fetchall()
    assert run_layers.use(trace_db, "trace", first)
    q2_now = trace_db.conn.execute(
        "SELECT value FROM judge_labels WHERE record = ? AND name = 'supported' AND target = 'a'",
        (layers["q2"],),
    ).fetchone()
    assert q2_now == ("true",)
    assert run_layers.use(trace_db, "trace", second)
    assert trace_db.conn.execute("SELECT * FROM judge_labels ORDER BY 1, 2, 3").fetchall() == before


def test_collect_reads_a_local_batch_output_file(judge_server, trace_file, tmp_path, cli_run):
    """`judge --batch`, then the provider's output written to a local file (as `vllm
    run-batch` writes it) read back with `--collect FILE`, log-probabilities included."""
    path = str(trace_file)
    cli_run(*judge_args(trace_file, judge_server, "--batch", "--logprobs"))
    judge_server.inject("500", match="number 5?")
    judge_server.complete_batches()
    batch = judge_server.state.batches["batch-1"]
    lines = judge_server.state.files[batch["output_file_id"]].splitlines()
    lines += judge_server.state.files[batch["error_file_id"]].splitlines()
    out = tmp_path / "batch-output.jsonl"
    out.write_bytes(b"\n".join([*lines, b"{not json", b'{"custom_id": "999-trace"}']) + b"\n")
    before = len(judge_server.state.requests)

    result = CliRunner(env={"HOME": str(tmp_path)}).invoke(
        cli, ["judge", path, "--collect", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 1  # q5 failed in the batch
    assert "batch batch-1: collected, 7 labelled, 1 errors" in result.stdout
    assert f"{out}:9: the line is not a JSON object" in result.stderr
    assert "1 lines answer no pending batch" in result.stderr
    assert len(judge_server.state.requests) == before  # nothing asked of the server
    layers = db_layers(trace_file.with_suffix(".ragreview.db"))
    assert layers["q5"] == {} and layers["q0"] == EXPECTED_TRACE
    (run,) = [json.loads(line) for line in cli_run("runs", path, "--json").splitlines()]
    assert run["mode"] == "batch" and run["status"] == "finished"
    assert run["logprobs"] == 14 and run["active"]
    assert "no batch is waiting" in cli_run("judge", path, "--collect", str(out))


def test_import_labels_are_the_import_run_and_a_reimport_keeps_the_active_run(
    judge_server, tmp_path, cli_run
):
    records = [
        {**r, "labels": {"judge": {"supported": {"a": False, "b": False}}}}
        for r in json.loads(json.dumps(_trace(3)))
    ]
    source = write_jsonl(tmp_path / "labelled.jsonl", records)
    path = str(source)
    cli_run("import", path)
    (imported,) = [json.loads(line) for line in cli_run("runs", path, "--json").splitlines()]
    assert imported["mode"] == "import" and imported["active"] and imported["labels"] == 6
    cli_run(
        "judge",
        path,
        "--model",
        "judge-test",
        "--base-url",
        judge_server.base_url,
        "--task",
        "trace",
    )
    cli_run("import", path)  # the same file again: the judge run stays on top
    db_path = source.with_suffix(".ragreview.db")
    assert all(layer == EXPECTED_TRACE for layer in db_layers_of(db_path, "labelled").values())
    cli_run("runs", "use", path, "import")
    # the import's labels on top; it gave no support_keys: those stay the judge run's
    assert all(
        layer == {"supported": {"a": False, "b": False}, "support_keys": {"a": ["0a"], "b": []}}
        for layer in db_layers_of(db_path, "labelled").values()
    )


def _trace(n: int) -> list[dict]:
    from .helpers import trace_records

    return trace_records(n)


def db_layers_of(db_path: Path, dataset: str) -> dict[str, dict]:
    from ragreview.store import records as store_records

    db = open_database(db_path)
    try:
        return {s.id: s.judge for s in store_records.iterate(db, dataset)}
    finally:
        db.conn.close()
