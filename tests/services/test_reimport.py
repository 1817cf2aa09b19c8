"""Re-importing a file: lines stored before byte for byte are skipped unparsed
(``formats.base.KnownLines``), and the database ends as a full re-import leaves it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragreview import formats
from ragreview.core.import_items import Unchanged
from ragreview.formats.base import KnownLines, ReadContext
from ragreview.services import import_pipeline
from ragreview.store import open_database
from ragreview.store import records as store_records
from tests.formats.helpers import HANDWRITTEN, run

from .test_import_pipeline import database_rows

RAGBENCH = HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl"


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_lines(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def reviewed(path: Path, db: Path) -> None:
    """Import ``path`` into ``db`` and review two of its records."""
    assert run("import", path, "--db", db).exit_code == 0
    assert run("label", path, "covidqa-18", "relevant", "0a", "false", "--db", db).exit_code == 0
    assert run("mark", path, "finqa-3", "--reviewed", "--db", db).exit_code == 0


def test_the_lines_stored_before_are_read_as_unchanged(tmp_path) -> None:
    path = write_lines(tmp_path / "rows.jsonl", lines_of(RAGBENCH))
    db_path = tmp_path / "rows.db"
    assert run("import", path, "--db", db_path).exit_code == 0
    db = open_database(db_path)
    known = store_records.known_lines(db, "rows", "ragbench", path.name)
    assert len(known) == 4
    _fmt, stream = formats.read(path, ctx=ReadContext(known=KnownLines(known)))
    entries = list(stream)
    assert all(isinstance(e, Unchanged) and not e.moved for e in entries)
    assert [e.id for e in entries] == [r["id"] for r in lines_of(RAGBENCH)]
    # another file (name) or format: records may differ, nothing is skipped
    assert store_records.known_lines(db, "rows", "ragbench", "other.jsonl") == {}
    assert store_records.known_lines(db, "rows", "ragreview", path.name) == {}


@pytest.mark.parametrize("worker", [False, True])
def test_an_unchanged_file_reimports_to_the_same_database(tmp_path, monkeypatch, worker) -> None:
    """(A re-import reads in this process; the first import, by a worker or not.)"""
    if worker:
        monkeypatch.setattr(import_pipeline, "PARALLEL_MIN_BYTES", 0)
    path = write_lines(tmp_path / "rows.jsonl", lines_of(RAGBENCH))
    db = tmp_path / "rows.db"
    reviewed(path, db)
    before = database_rows(db)
    result = run("import", path, "--db", db)
    assert result.exit_code == 0 and "0 new, 0 changed, 4 unchanged" in result.output
    assert database_rows(db) == before


def changed(rows: list[dict], change: str) -> list[dict]:
    rows = json.loads(json.dumps(rows))
    if change == "edited":  # a reviewed record's sentence changes: it becomes stale
        rows[1]["documents_sentences"][0][0][1] = "A different sentence."
    elif change == "moved":  # a new line on top moves every other one
        rows.insert(0, {**rows[2], "id": "new-1"})
    elif change == "repeated":  # an id now repeats: both are stored by record number
        rows.append({**rows[3], "id": rows[2]["id"]})
    return rows


@pytest.mark.parametrize("worker", [False, True])
@pytest.mark.parametrize("change", ["edited", "moved", "repeated"])
def test_a_changed_file_reimports_as_without_skipping(tmp_path, monkeypatch, change, worker):
    """The same re-import into two copies: one skips unchanged lines (same file name),
    the other parses every line (another file name, same dataset)."""
    if worker:
        monkeypatch.setattr(import_pipeline, "PARALLEL_MIN_BYTES", 0)
    first = lines_of(RAGBENCH)
    skipped, parsed = tmp_path / "skipped", tmp_path / "parsed"
    for folder in (skipped, parsed):
        folder.mkdir()
        reviewed(write_lines(folder / "rows.jsonl", first), folder / "rows.db")
    again = changed(first, change)
    write_lines(skipped / "rows.jsonl", again)
    other = write_lines(parsed / "other.jsonl", again)
    results = [
        run("import", skipped / "rows.jsonl", "--db", skipped / "rows.db"),
        run("import", other, "--db", parsed / "rows.db", "--dataset", "rows"),
    ]
    said = [r.output.split(": dataset ", 1)[1] for r in results]  # (after the DB's path)
    assert said[0] == said[1]
    assert database_rows(skipped / "rows.db") == database_rows(parsed / "rows.db")


def test_a_reimport_keeps_the_judge_run_that_relabelled_a_record_on_top(tmp_path) -> None:
    """A re-import rewrites the file's import run and keeps the judge run that came
    after it active on top (docs/agreement.md, Judge runs)."""
    from ragreview.store import judge_store, run_layers

    path = write_lines(tmp_path / "rows.jsonl", lines_of(RAGBENCH))
    db_path = tmp_path / "rows.db"
    assert run("import", path, "--db", db_path).exit_code == 0
    db = open_database(db_path)
    rowid = store_records.find(db, "finqa-3").rowid
    imported = store_records.find(db, "finqa-3").judge
    run_id = judge_store.start_run(db, "rows", "m", None, "trace")
    judge_store.save_result(
        db, rowid, run_id, "trace", ["relevant", "utilized"], {"relevant": {"0a": True}}
    )  # as the trace task writes them: no sentence utilized
    judged = store_records.find(db, "finqa-3").judge
    assert judged != imported
    known = store_records.known_lines(db, "rows", "ragbench", path.name)
    assert rowid not in {r for r, _id, _pos in known.values()} and len(known) == 3
    db.conn.close()
    result = run("import", path, "--db", db_path)
    assert result.exit_code == 0 and "4 unchanged" in result.output
    db = open_database(db_path)
    assert store_records.find(db, "finqa-3").judge == judged
    import_run = run_layers.import_run_id("rows")
    assert run_layers.layers(db, "rows", import_run, [rowid])[rowid] == imported
