"""A judge run over an imported RAGBench file, under every TRACe variant
(docs/agreement.md, Judge runs; docs/metrics.md, TRACe).

The hand-written RAGBench rows are imported (the import run: RAGBench's own label
lists, with their dotted, repeated and unknown keys), then judged through the local
OpenAI-compatible server with the real openai client. Every per-record value of every
variant is checked against numbers worked out by hand from the labels of the run that
is active: the raw list lengths RAGBench stores describe the imported labels only, so
they count while the import run is active and never under the new run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragreview.cli import cli

from .helpers import judge_args, ragreview

ROWS = Path(__file__).parents[3] / "fixtures/handwritten/ragbench/covidqa_test_rows.jsonl"

# The rows' document sentences (key: characters) and response keys:
#   covidqa-17: 0a 52, 0b 55, 0c 41, 1a 52, 1b 33 (233 chars) | a, b
#   covidqa-18: 0a 42, 0b 50, 0c 26 (118)                     | a, b
#   finqa-3:    0a 33, 0b 33, 0c 30 (96)                      | a, b
#   cuad-5:     0a 51, 0b 47 (98)                             | a
#
# The judge run (the test server's oracle): relevant = keys ending in "a", utilized =
# the first document sentence, every response sentence supported except "b".
#   covidqa-17: R = {0a, 1a}, U = {0a}; finqa-3, covidqa-18, cuad-5: R = U = {0a}
# TRACe follows RAGBench: relevance |R|/T, utilization |U|/T, completeness |R∩U|/|R|,
# adherence = no unsupported response sentence (ragbench, length); capped20 as in
# core/metrics/trace.py (min(1, |R|/20), min(1, |U|/|R|), all sentences supported).
RUN = {
    "ragbench": {
        "covidqa-17": (2 / 5, 1 / 5, 1 / 2, 0.0),
        "covidqa-18": (1 / 3, 1 / 3, 1.0, 0.0),
        "finqa-3": (1 / 3, 1 / 3, 1.0, 0.0),
        "cuad-5": (1 / 2, 1 / 2, 1.0, 1.0),
    },
    "length": {
        "covidqa-17": ((52 + 52) / 233, 52 / 233, 52 / 104, 0.0),
        "covidqa-18": (42 / 118, 42 / 118, 1.0, 0.0),
        "finqa-3": (33 / 96, 33 / 96, 1.0, 0.0),
        "cuad-5": (51 / 98, 51 / 98, 1.0, 1.0),
    },
    "capped20": {
        "covidqa-17": (2 / 20, 1 / 2, 1 / 2, 0.0),
        "covidqa-18": (1 / 20, 1.0, 1.0, 0.0),
        "finqa-3": (1 / 20, 1.0, 1.0, 0.0),
        "cuad-5": (1 / 20, 1.0, 1.0, 1.0),
    },
}

# The import run (the rows' own lists): covidqa-17 R = U = {0a, 0b, 1a} (listed as
# "0a." "0b." "1a."); covidqa-18 R = {0a, 0b} listed 3 times ("0a" twice), U = {0a},
# "b" unsupported; finqa-3 R = {0a, 0b} listed with the unknown "2z", U = {0a, 0b};
# cuad-5 nothing relevant. Under ragbench the listed lengths count (the shipped scores).
IMPORT = {
    "ragbench": {
        "covidqa-17": (3 / 5, 3 / 5, 1.0, 1.0),
        "covidqa-18": (3 / 3, 1 / 3, 1 / 3, 0.0),
        "finqa-3": (3 / 3, 2 / 3, 2 / 3, 1.0),
        "cuad-5": (0.0, 0.0, 1.0, 1.0),
    },
    "length": {
        "covidqa-17": (159 / 233, 159 / 233, 1.0, 1.0),
        "covidqa-18": (92 / 118, 42 / 118, 42 / 92, 0.0),
        "finqa-3": (66 / 96, 66 / 96, 1.0, 1.0),
        "cuad-5": (0.0, 0.0, 1.0, 1.0),
    },
    "capped20": {
        "covidqa-17": (3 / 20, 1.0, 1.0, 1.0),
        "covidqa-18": (2 / 20, 1 / 2, 1 / 2, 0.0),
        "finqa-3": (2 / 20, 1.0, 1.0, 1.0),
        "cuad-5": (0.0, 0.0, 1.0, 1.0),
    },
}

NAMES = ("trace.relevance", "trace.utilization", "trace.completeness", "trace.adherence")


@pytest.fixture
def ragbench_file(tmp_path: Path) -> Path:
    path = tmp_path / "covidqa.jsonl"
    shutil.copy(ROWS, path)
    return path


def run(*args: str) -> str:
    result = CliRunner(env={"USER": "tester"}).invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def per_record(path: Path, layer: str = "judge") -> dict[str, tuple]:
    lines = run("metrics", str(path), "--per-record", "--json").splitlines()
    rows = [json.loads(line) for line in lines]
    return {r["id"]: tuple(r[layer][n] for n in NAMES) for r in rows}


def check_every_variant(path: Path, expected: dict) -> None:
    for variant, values in expected.items():
        run("settings", str(path), f"trace.variant={variant}")
        got = per_record(path)
        assert got == {i: pytest.approx(v, abs=1e-15) for i, v in values.items()}, variant
        dataset = json.loads(run("metrics", str(path), "--json"))["judge"]
        for i, name in enumerate(NAMES):  # the running sums follow the same values
            mean = sum(v[i] for v in values.values()) / len(values)
            assert dataset[name] == pytest.approx(mean, abs=1e-12), (variant, name)
    run("settings", str(path), "trace.variant=ragbench")


def test_every_variant_follows_the_active_run(judge_server, ragbench_file, tmp_path):
    path = str(ragbench_file)
    run("import", path)
    check_every_variant(ragbench_file, IMPORT)

    run(*judge_args(ragbench_file, judge_server))
    runs = [json.loads(line) for line in run("runs", path, "--json").splitlines()]
    imported, judged = runs
    assert judged["active"] and imported["mode"] == "import"
    check_every_variant(ragbench_file, RUN)
    # the source's stored scores are RAGBench's, the judge layer is the new run's: the
    # stored-vs-recomputed table sees them differ
    compared = _stored_comparison(ragbench_file)
    assert compared["trace.relevance"]["disagree"] == 4
    assert compared["trace.utilization"]["disagree"] == 3  # cuad-5: 1/2 vs 0; …

    run("runs", "use", path, "import")
    check_every_variant(ragbench_file, IMPORT)
    assert _stored_comparison(ragbench_file)["trace.relevance"]["disagree"] == 0

    run("runs", "use", path, judged["id"])
    check_every_variant(ragbench_file, RUN)


def test_a_reviewer_on_top_of_the_new_run_counts_no_imported_list(judge_server, ragbench_file):
    """The effective layer over the new run: the reviewer's label moves |R| from the
    run's own count, not from the imported file's list lengths."""
    path = str(ragbench_file)
    run("import", path)
    run(*judge_args(ragbench_file, judge_server))
    run("label", path, "covidqa-18", "relevant", "0b", "true")
    effective = per_record(ragbench_file, "effective")["covidqa-18"]
    # R = {0a, 0b}, U = {0a}: relevance 2/3, utilization 1/3, completeness 1/2
    assert effective == pytest.approx((2 / 3, 1 / 3, 1 / 2, 0.0), abs=1e-15)
    run("runs", "use", path, "import")
    # the import's labels again, with the reviewer's 0b (already in the import's R):
    # RAGBench's listed 3 entries count
    effective = per_record(ragbench_file, "effective")["covidqa-18"]
    assert effective == pytest.approx((1.0, 1 / 3, 1 / 3, 0.0), abs=1e-15)


def test_agreement_runs_scores_each_run_from_its_own_labels(judge_server, ragbench_file):
    """agreement --runs: the import run's TRACe metrics count RAGBench's listed entries,
    the new run's never (covidqa-18: listed 3 of 3 sentences vs the run's {0a})."""
    path = str(ragbench_file)
    run("import", path)
    run(*judge_args(ragbench_file, judge_server))
    run("mark", path, "covidqa-18", "--reviewed")
    report = json.loads(run("agreement", path, "--runs", "--json"))
    by_mode = {r["mode"]: r["metrics"]["trace.relevance"] for r in report["runs"]}
    assert by_mode["import"]["judge_mean"] == 1.0  # 3 listed / 3 sentences
    online = [v for mode, v in by_mode.items() if mode != "import"]
    assert online[0]["judge_mean"] == pytest.approx(1 / 3)  # {0a} / 3
    assert online[0]["effective_mean"] == pytest.approx(1 / 3)  # the reviewer accepted it


def _stored_comparison(path: Path) -> dict:
    from ragreview.store import metric_summary_reads, open_database

    db = open_database(path.with_suffix(".ragreview.db"))
    try:
        return metric_summary_reads.stored_comparison(db, "covidqa")
    finally:
        db.conn.close()


async def test_the_review_screen_shows_the_active_runs_reasoning(judge_server, ragbench_file):
    """The TUI (through Pilot) shows the reasoning of the run whose labels it shows:
    the new run's reply, not the imported row's explanations; the import's again once
    it is the active run."""
    from ragreview.cli.session import open_target
    from ragreview.store import run_layers
    from tests.tui.conftest import make_app

    path = str(ragbench_file)
    run("import", path)
    imported_words = "Sentences about the question's subject are relevant."

    async def shown() -> str:
        opened = open_target(path)
        try:
            app = make_app(opened)
            async with app.run_test(size=(100, 30)) as pilot:
                await pilot.pause()
                # (a TRACe explanation shows above the first item it explains)
                return " ".join(f"{n}: {why}" for n, why in app.screen.review.record_reasons())
        finally:
            opened.db.conn.close()

    assert imported_words in await shown()
    done = ragreview(*judge_args(ragbench_file, judge_server), real_process=True)  # own loop
    assert done.returncode == 0, done.stderr
    now = await shown()
    # the oracle explains every verdict with "…"
    assert imported_words not in now and "relevant: …" in now, now
    opened = open_target(path)
    try:
        run_layers.use(opened.db, opened.dataset, run_layers.import_run_id(opened.dataset))
    finally:
        opened.db.conn.close()
    assert imported_words in await shown()
