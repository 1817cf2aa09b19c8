"""A reviewed record's stored label targets (``store.target_rows``, m017) give what its
data gives, on every family, and never outlive the data they were read from.

The reference is ``RecordTargets`` over the record's stored JSON, which
tests/core/test_record_targets.py holds equal to ``Record.targets`` of the parsed
record, for every target kind.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from ragreview.core.import_items import ImportItem
from ragreview.core.record import parse_record
from ragreview.core.record_targets import FORM, KINDS, RecordTargets, StoredTargets, stored_form
from ragreview.store import (
    history,
    importer,
    item_edits,
    judge_store,
    memory_database,
    open_database,
    review_queries,
    target_rows,
)
from ragreview.store.records import loads

from ..formats.helpers import FAMILY_SOURCES, HANDWRITTEN, map_args, run

RAGBENCH = HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl"


def imported(source: Path, db_path: Path):
    assert run("import", source, "--db", db_path, *map_args(source)).exit_code == 0
    return open_database(db_path)


def from_data(db, rowid: int) -> RecordTargets:
    (text,) = db.conn.execute("SELECT data FROM records WHERE rowid = ?", (rowid,)).fetchone()
    return RecordTargets(loads(text))


def assert_same(stored: StoredTargets, lean: RecordTargets) -> None:
    assert stored.task == lean.task
    for kind in KINDS:
        assert stored.targets(kind) == lean.targets(kind), kind


def rowids(db) -> list[int]:
    return [r for (r,) in db.conn.execute("SELECT rowid FROM records ORDER BY position")]


@pytest.mark.parametrize("source", FAMILY_SOURCES, ids=lambda p: p.name)
def test_a_record_marked_reviewed_stores_the_targets_its_data_gives(
    source: Path, tmp_path: Path
) -> None:
    db = imported(source, tmp_path / "t.db")
    every = rowids(db)
    # an import stores those of the records its file marks reviewed (agreement reads
    # reviewed records only)
    reviewed = [
        r for (r,) in db.conn.execute("SELECT rowid FROM records WHERE status = 'reviewed'")
    ]
    assert sorted(target_rows.page(db.conn, every)) == sorted(reviewed)
    for rowid in every:
        history.mark(db, rowid, "reviewed", "ann")
    stored = target_rows.page(db.conn, every)
    assert sorted(stored) == sorted(every)
    checked = 0
    for rowid in every:
        assert_same(stored[rowid], from_data(db, rowid))
        checked += sum(bool(stored[rowid].targets(k)) for k in KINDS if k != "record")
    assert checked  # (the family's records have targets beyond the record itself)
    db.conn.close()


def test_an_unknown_kind_is_refused_as_by_the_record() -> None:
    with pytest.raises(ValueError, match="unknown target kind"):
        StoredTargets("trace", {}).targets("nope")


def test_a_changed_reimport_drops_the_old_targets_and_a_new_review_stores_the_new(
    tmp_path: Path,
) -> None:
    rows = [json.loads(line) for line in RAGBENCH.read_text(encoding="utf-8").splitlines()]
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = imported(source, tmp_path / "t.db")
    first = rowids(db)[1]
    history.mark(db, first, "reviewed", "ann")
    before = target_rows.page(db.conn, [first])[first].targets("doc")

    rows[1]["documents_sentences"][0].append(["zz", "A sentence the new line adds."])
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db.conn.close()
    db = imported(source, tmp_path / "t.db")
    assert target_rows.page(db.conn, [first]) == {}  # (the record is stale now)

    history.mark(db, first, "reviewed", "ann")
    after = target_rows.page(db.conn, [first])[first]
    assert_same(after, from_data(db, first))
    assert after.targets("doc") != before and len(after.targets("doc")) == len(before) + 1
    db.conn.close()


def test_an_edit_of_a_reviewed_records_items_stores_its_new_targets(tmp_path: Path) -> None:
    source = next(p for p in FAMILY_SOURCES if p.name == "checking_outputs.json")  # RAGChecker
    db = imported(source, tmp_path / "t.db")
    reviewed, other = rowids(db)[:2]
    history.mark(db, reviewed, "reviewed", "ann")
    for rowid in (reviewed, other):
        statement = from_data(db, rowid).targets("statement")[0]
        item_edits.delete(db, rowid, "statement", statement, "ann")
    stored = target_rows.page(db.conn, [reviewed, other])
    assert list(stored) == [reviewed]  # (an unreviewed record keeps none)
    assert statement not in stored[reviewed].targets("statement")
    assert_same(stored[reviewed], from_data(db, reviewed))
    db.conn.close()


def test_a_change_of_the_data_by_any_writer_drops_the_targets(tmp_path: Path) -> None:
    db = imported(RAGBENCH, tmp_path / "t.db")
    rowid = rowids(db)[0]
    history.mark(db, rowid, "reviewed", "ann")
    with db.conn:  # (the trigger: no writer can leave them out of step)
        db.conn.execute("UPDATE records SET data = data WHERE rowid = ?", (rowid,))
    assert target_rows.page(db.conn, [rowid]) == {}
    db.conn.close()


def test_targets_of_another_form_are_read_as_missing(tmp_path: Path) -> None:
    db = imported(RAGBENCH, tmp_path / "t.db")
    every = rowids(db)
    for rowid in every:
        history.mark(db, rowid, "reviewed", "ann")
    with db.conn:
        db.conn.execute("UPDATE record_targets SET form = ?", (FORM - 1,))
    assert target_rows.page(db.conn, every) == {}
    dataset = db.conn.execute("SELECT name FROM datasets").fetchone()[0]
    assert {type(r.record) for r in review_queries.iter_reviewed(db, dataset)} == {RecordTargets}
    history.mark(db, every[0], "reviewed", "ann")  # stored again, at this form
    assert list(target_rows.page(db.conn, every)) == [every[0]]
    db.conn.close()


def test_every_kind_a_label_names_is_stored() -> None:
    from ragreview.core.labels import CATALOGUE

    assert {spec.target for spec in CATALOGUE.values()} <= set(KINDS)


def test_a_target_holding_the_separator_keeps_its_kind_as_a_list() -> None:
    data = {
        "task": "trace",
        "documents": [{"sentences": [["0a", "x"], ["0\0b", "y"], ["0c", "z"]]}],
        "response": [["a", "r"], ["b", "s"]],
    }
    task, by_kind = stored_form(data)
    assert by_kind["doc"] == ("0a", "0\0b", "0c") and by_kind["response"] == "a\0b"
    stored = StoredTargets(*orjson.loads(orjson.dumps((task, by_kind))))
    assert_same(stored, RecordTargets(data))


def test_a_judges_new_facts_on_a_reviewed_record_are_its_stored_targets() -> None:
    db = memory_database()
    record = parse_record(
        {"id": "r1", "task": "longform", "response": [["a", "x"]], "facts": [["f0", "A."]]}
    )
    importer.import_records(db, "d", "ragreview", None, [ImportItem(1, record, {})])
    rowid = rowids(db)[0]
    history.mark(db, rowid, "reviewed", "ann")
    assert target_rows.page(db.conn, [rowid])[rowid].targets("fact") == ("f0",)
    run = judge_store.start_run(db, "d", "m", "http://127.0.0.1:1/v1", "longform")
    facts = [["f0", "A."], ["f1", "B."]]
    judge_store.save_result(db, rowid, run, "longform", ("fact",), {}, facts=facts)
    stored = target_rows.page(db.conn, [rowid])[rowid]
    assert stored.targets("fact") == ("f0", "f1")
    assert_same(stored, from_data(db, rowid))
