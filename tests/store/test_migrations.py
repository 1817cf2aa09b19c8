"""Upgrading a review DB built by every earlier schema version (as simonw/llm tests its
migrations): the rows a reviewer made survive, and every command reads them as before."""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragreview.cli import cli
from ragreview.store.db import open_database
from ragreview.store.migrations import MIGRATIONS

NAMES = [func.__name__ for _name, _tx, func in MIGRATIONS._entries]
READS = (
    ("metrics", "--json"),
    ("metrics", "--per-record", "--json"),
    ("log", "--json"),
    ("agreement", "--json"),
)


def run(runner: CliRunner, *args: str) -> str:
    result = runner.invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, demo_path: Path) -> Path:
    """A current-schema DB with a reviewer's work in it: overrides with reasons, a
    revert, a reviewed mark and a changed setting."""
    folder = tmp_path_factory.mktemp("reference")
    source = folder / "demo.jsonl"
    shutil.copy(demo_path, source)
    runner = CliRunner(env={"USER": "tester", "HOME": str(folder)})
    run(runner, "import", str(source))
    run(runner, "label", str(source), "covid-1", "utilized", "0c", "true", "--reason", "used")
    run(runner, "label", str(source), "covid-1", "supported", "b", "true")
    run(runner, "label", str(source), "covid-2", "relevant", "0a", "false")
    run(runner, "undo", str(source))
    run(runner, "mark", str(source), "covid-1", "--reviewed")
    run(runner, "settings", str(source), "longform.k=64")
    return folder / "demo.ragreview.db"


def _tables(conn: sqlite3.Connection, schema: str) -> dict[str, str]:
    rows = conn.execute(
        f"SELECT name, sql FROM {schema}.sqlite_master WHERE type = 'table' "
        "AND name NOT LIKE 'sqlite_%' AND name != '_sqlite_migrations'"
    )
    return dict(rows.fetchall())


def _columns(conn: sqlite3.Connection, schema: str, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA {schema}.table_info({table!r})")]


def build_at(version: int, reference: Path, path: Path) -> None:
    """A DB at the schema after the first ``version`` migrations, holding every row of
    ``reference`` that schema has columns for (rowids kept, so references hold)."""
    db = open_database_at(path, version)
    conn = db.conn
    conn.execute("ATTACH DATABASE ? AS ref", (str(reference),))
    with conn:
        for table, sql in _tables(conn, "main").items():
            columns = [
                c for c in _columns(conn, "main", table) if c in _columns(conn, "ref", table)
            ]
            if "WITHOUT ROWID" not in sql.upper():
                columns = ["rowid", *columns]
            listed = ", ".join(columns)
            conn.execute(f"INSERT INTO main.{table} ({listed}) SELECT {listed} FROM ref.{table}")
    conn.execute("DETACH DATABASE ref")
    conn.close()


def open_database_at(path: Path, version: int):
    import sqlite_utils

    db = sqlite_utils.Database(path)
    stop = NAMES[version] if version < len(NAMES) else None
    MIGRATIONS.apply(db, stop_before=stop)
    return db


def same_numbers(expected: object, got: object) -> object:
    """``expected``, with each float replaced by ``got``'s where the two differ only in
    the last bits. A DB upgraded from before m002 has its dataset sums built in one pass,
    the reference moved them label by label: float sums that depend on their order (a
    known limit of the running sums, docs/architecture.md)."""
    if isinstance(expected, dict) and isinstance(got, dict) and expected.keys() == got.keys():
        return {k: same_numbers(v, got[k]) for k, v in expected.items()}
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        return [same_numbers(a, b) for a, b in zip(expected, got)]
    if isinstance(expected, float) and isinstance(got, float):
        return got if math.isclose(expected, got, rel_tol=1e-12, abs_tol=1e-15) else expected
    return expected


def test_every_migration_is_listed_in_order() -> None:
    assert NAMES == sorted(NAMES) and NAMES[0] == "m001_initial"


@pytest.mark.parametrize("version", range(1, len(NAMES)))
def test_a_db_at_an_earlier_schema_upgrades_with_its_data(
    version: int, reference: Path, tmp_path: Path
) -> None:
    old = tmp_path / "demo.ragreview.db"
    build_at(version, reference, old)
    applied = [n for (n,) in sqlite3.connect(old).execute("SELECT name FROM _sqlite_migrations")]
    assert applied == NAMES[:version]

    open_database(old).conn.close()  # the upgrade

    upgraded = sqlite3.connect(old)
    assert [n for (n,) in upgraded.execute("SELECT name FROM _sqlite_migrations")] == NAMES
    for table in ("records", "events", "human_labels", "judge_labels", "settings"):
        query = f"SELECT * FROM {table} ORDER BY 1, 2"
        before = sqlite3.connect(reference).execute(query).fetchall()
        assert upgraded.execute(query).fetchall() == before, table
    upgraded.close()

    runner = CliRunner(env={"USER": "tester", "HOME": str(tmp_path)})
    for args in READS:
        expected = [json.loads(line) for line in run(runner, *args, str(reference)).splitlines()]
        got = [json.loads(line) for line in run(runner, *args, str(old)).splitlines()]
        assert got == same_numbers(expected, got), args
    # and it takes new work
    run(runner, "label", str(old), "covid-2", "relevant", "0a", "false")
    log = [json.loads(line) for line in run(runner, "log", "--json", str(old)).splitlines()]
    assert log[-1]["record"] == "covid-2" and log[-1]["new"] is False


def test_m010_makes_the_judge_layer_into_runs(reference: Path, tmp_path: Path) -> None:
    """A DB from before judge runs were layers: imported labels (run NULL) and labels a
    judge run wrote become two runs; the newer is active; nothing visible changes."""
    old = tmp_path / "demo.ragreview.db"
    build_at(NAMES.index("m010_judge_run_layers"), reference, old)
    conn = sqlite3.connect(old)
    with conn:  # as the previous build left it: no import run, no active-run setting
        conn.execute("DELETE FROM settings WHERE name = 'judge.run'")
        conn.execute("DELETE FROM judge_runs")
        conn.execute(
            "INSERT INTO judge_runs (id, dataset, model, task, started) "
            "VALUES ('run-1', 'demo', 'gpt-x', 'trace', '2030-01-01T00:00:00')"
        )
        conn.execute(  # a trace run re-judged covid-1 (it writes every trace label)
            "UPDATE judge_labels SET run = 'run-1' "
            "WHERE record = (SELECT rowid FROM records WHERE id = 'covid-1')"
        )
    judge_before = conn.execute("SELECT * FROM judge_labels ORDER BY 1, 2, 3").fetchall()
    judged = sum(1 for row in judge_before if row[4] == "run-1")
    conn.close()

    db = open_database(old)  # the upgrade
    conn = db.conn
    assert conn.execute("SELECT * FROM judge_labels ORDER BY 1, 2, 3").fetchall() == judge_before
    by_run = dict(conn.execute("SELECT run, count(*) FROM run_labels GROUP BY run").fetchall())
    import_run = "import-" + __import__("hashlib").sha256(b"demo").hexdigest()[:8]
    assert by_run == {
        "run-1": judged,
        import_run: len(judge_before) - judged,
    }
    (active,) = conn.execute(
        "SELECT value FROM settings WHERE dataset = 'demo' AND name = 'judge.run'"
    ).fetchone()
    assert json.loads(active) == "run-1"
    db.conn.close()

    runner = CliRunner(env={"USER": "tester", "HOME": str(tmp_path)})
    listed = [json.loads(line) for line in run(runner, "runs", str(old), "--json").splitlines()]
    assert [(r["id"], r["mode"], r["active"]) for r in listed] == [
        (import_run, "import", False),
        ("run-1", "online", True),
    ]
    metrics = run(runner, "metrics", str(old), "--json")
    run(runner, "runs", "use", str(old), "import")
    run(runner, "runs", "use", str(old), "run-1")
    # the runs' labels are disjoint: either on top gives back the same judge layer
    after = sqlite3.connect(old).execute("SELECT * FROM judge_labels ORDER BY 1, 2, 3").fetchall()
    assert after == judge_before
    assert json.loads(run(runner, "metrics", str(old), "--json")) == same_numbers(
        json.loads(metrics), json.loads(run(runner, "metrics", str(old), "--json"))
    )


def test_m017_stores_the_targets_of_the_reviewed_records(reference: Path, tmp_path: Path) -> None:
    """A file from before m017 gets each reviewed record's label targets, as marking it
    reviewed now stores them (``store.target_rows``); the other records get none."""
    from ragreview.core.record_targets import FORM
    from ragreview.store import target_rows

    old = tmp_path / "demo.ragreview.db"
    build_at(NAMES.index("m017_record_targets"), reference, old)
    db = open_database(old)
    got = db.conn.execute("SELECT record, form, targets FROM record_targets ORDER BY 1").fetchall()
    want = [
        (rowid, FORM, target_rows.packed(data))
        for rowid, data in db.conn.execute(
            "SELECT rowid, data FROM records WHERE status = 'reviewed' ORDER BY rowid"
        )
    ]
    assert got == want and len(want) == 1  # (covid-1)
    db.conn.close()
