"""Import (upsert by dataset and id), lookup and iteration on a real SQLite file."""

from __future__ import annotations

import sqlite3

import pytest

from ragreview.core.errors import RagreviewError
from ragreview.core.import_items import ImportItem
from ragreview.core.record import parse_record
from ragreview.core.where import Condition
from ragreview.store import (
    browse,
    event_reads,
    history,
    importer,
    memory_database,
    open_database,
)
from ragreview.store import records as store_records
from ragreview.store.migrations import MIGRATIONS


def item(position: int, rid: str, text: str = "x", judge=None, human=None, source=None):
    rec = parse_record(
        {
            "id": rid,
            "documents": [{"sentences": [["0a", text], ["0b", "y"]]}],
            "response": [["a", "A."]],
        }
    )
    return ImportItem(position, rec, judge or {}, human or {}, source)


@pytest.fixture
def db(tmp_path):
    database = open_database(tmp_path / "t.ragreview.db")
    yield database
    database.conn.close()


def test_open_database_migrates_and_sets_durable_pragmas(tmp_path) -> None:
    db = open_database(tmp_path / "a.db")
    assert {"datasets", "settings", "records", "judge_labels", "events", "human_labels"} <= set(
        db.table_names()
    )
    assert db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert db.conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    assert not MIGRATIONS.pending(db)
    db.conn.close()
    again = open_database(tmp_path / "a.db")  # reopening applies nothing twice
    assert not MIGRATIONS.pending(again)


def test_migrations_apply_on_memory_database() -> None:
    db = memory_database()
    assert "events" in db.table_names() and not MIGRATIONS.pending(db)


def test_field_filters_read_sources_on_a_memory_database() -> None:
    # a `field=value` filter reads sources through ragreview_source(), which every
    # connection the store makes registers, the in-memory one too
    db = memory_database()
    sources = ['{"id": "r1", "model": "a"}', '{"id": "r2", "model": "b"}']
    items = [item(i, f"r{i + 1}", source=src) for i, src in enumerate(sources)]
    importer.import_records(db, "ds", "ragreview", None, items)
    wanted = browse.ListFilter(where=(Condition("model", "b"),))
    rowids = browse.rowids(db, "ds", wanted)
    assert [store_records.get(db, r).id for r in rowids] == ["r2"]


def test_import_inserts_records_and_judge_labels(db) -> None:
    summary = importer.import_records(
        db,
        "ds",
        "ragreview",
        "in.jsonl",
        [item(1, "r1", judge={"relevant": {"0a": True}}), item(2, "r2")],
    )
    assert (summary.inserted, summary.updated, summary.unchanged) == (2, 0, 0)
    stored = store_records.find(db, "r1")
    assert stored.judge == {"relevant": {"0a": True}} and stored.human == {}
    assert stored.status == "unreviewed" and stored.position == 1
    assert [r.id for r in store_records.iterate(db, "ds")] == ["r1", "r2"]
    assert store_records.counts(db, "ds") == {"unreviewed": 2}
    assert db.conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0


def test_human_labels_in_the_file_become_events(db) -> None:
    importer.import_records(
        db, "ds", "ragreview", None, [item(1, "r1", human={"relevant": {"0b": True}})]
    )
    stored = store_records.find(db, "r1")
    assert stored.human == {"relevant": {"0b": True}}
    events = list(event_reads.iter_events(db))
    assert [(e.name, e.target, e.old, e.new, e.reason) for e in events] == [
        ("relevant", "0b", None, True, "imported from file")
    ]


def test_reimport_keeps_human_labels_and_history(db) -> None:
    importer.import_records(
        db, "ds", "ragreview", None, [item(1, "r1", judge={"relevant": {"0a": True}})]
    )
    rowid = store_records.find(db, "r1").rowid
    history.set_label(db, rowid, "relevant", "0a", False, "ann")
    summary = importer.import_records(
        db,
        "ds",
        "ragreview",
        None,
        [item(1, "r1", judge={"relevant": {"0a": True, "0b": True}}), item(2, "r2")],
    )
    assert (summary.inserted, summary.updated, summary.unchanged, summary.stale) == (1, 0, 1, 0)
    stored = store_records.find(db, "r1")
    assert stored.rowid == rowid
    assert stored.human == {"relevant": {"0a": False}}
    assert stored.judge == {"relevant": {"0a": True, "0b": True}}  # judge layer replaced
    assert stored.status == "unreviewed"
    assert len(list(event_reads.iter_events(db))) == 1


def test_changed_content_marks_reviewed_or_overridden_records_stale(db) -> None:
    importer.import_records(
        db, "ds", "ragreview", None, [item(1, "r1"), item(2, "r2"), item(3, "r3")]
    )
    history.set_label(db, store_records.find(db, "r1").rowid, "relevant", "0a", True, "ann")
    history.mark(db, store_records.find(db, "r2").rowid, "reviewed", "ann")
    summary = importer.import_records(
        db,
        "ds",
        "ragreview",
        None,
        [item(1, "r1", "changed"), item(2, "r2", "changed"), item(3, "r3", "changed")],
    )
    assert (summary.updated, summary.stale) == (3, 2)
    assert store_records.find(db, "r1").status == "stale"
    assert store_records.find(db, "r2").status == "stale"
    assert store_records.find(db, "r3").status == "unreviewed"  # nothing to re-review
    assert store_records.find(db, "r1").record.doc_sentences[0] == ("0a", "changed")
    assert store_records.find(db, "r1").human == {"relevant": {"0a": True}}
    assert store_records.counts(db, "ds") == {"stale": 2, "unreviewed": 1}


def test_changed_source_alone_is_a_change(db) -> None:
    importer.import_records(db, "ds", "f", None, [item(1, "r1", source='{"a": 1}')])
    history.mark(db, store_records.find(db, "r1").rowid, "reviewed", "ann")
    summary = importer.import_records(db, "ds", "f", None, [item(1, "r1", source='{"a": 2}')])
    assert summary.stale == 1 and store_records.find(db, "r1").source == '{"a": 2}'


def test_datasets_are_separate(db) -> None:
    importer.import_records(db, "one", "ragreview", None, [item(1, "r1")])
    importer.import_records(db, "two", "ragreview", None, [item(1, "r1"), item(2, "r2")])
    assert [d["name"] for d in store_records.datasets(db)] == ["one", "two"]
    assert store_records.find(db, "r1", "two").dataset == "two"
    with pytest.raises(RagreviewError, match="several datasets"):
        store_records.find(db, "r1")
    with pytest.raises(RagreviewError, match="no record"):
        store_records.find(db, "nope")
    assert [r.id for r in store_records.iterate(db, "two")] == ["r1", "r2"]


def test_iterate_pages_in_file_order(db) -> None:
    items = [item(p, f"r{p}") for p in (5, 1, 3, 2, 4)]
    importer.import_records(db, "ds", "ragreview", None, items)
    assert [r.position for r in store_records.iterate(db, "ds", batch=2)] == [1, 2, 3, 4, 5]


def test_iterate_pages_across_datasets_ties_and_status(db) -> None:
    b = [item(2, "b2"), item(1, "b1x"), item(1, "b1y"), item(3, "b3")]
    importer.import_records(db, "b", "ragreview", None, b)
    importer.import_records(db, "a", "ragreview", None, [item(1, "a1x"), item(1, "a1y")])
    db.conn.execute("UPDATE records SET status = 'reviewed' WHERE id IN ('b1y', 'b3')")
    in_order = ["a1x", "a1y", "b1x", "b1y", "b2", "b3"]  # dataset, position, then rowid
    assert [r.id for r in store_records.iterate(db, batch=1)] == in_order
    assert [r.id for r in store_records.iterate(db, "b", batch=1)] == in_order[2:]
    reviewed = store_records.iterate(db, "b", status="reviewed", batch=1)
    assert [r.id for r in reviewed] == ["b1y", "b3"]


def test_a_lazy_judge_layer_is_the_stored_one(db) -> None:
    items = [item(p, f"r{p}", judge={"relevant": {"0a": p % 2 == 0}}) for p in range(1, 8)]
    importer.import_records(db, "ds", "ragreview", None, items)
    eager = list(store_records.iterate(db, "ds", batch=3))
    lazy = list(store_records.iterate(db, "ds", batch=3, lazy_judge=True))
    assert [r.judge for r in lazy] == [r.judge for r in eager]
    assert [r.judge for r in eager] == [{"relevant": {"0a": p % 2 == 0}} for p in range(1, 8)]
    assert [r.record for r in lazy] == [r.record for r in eager]


def test_failed_import_writes_nothing(db) -> None:
    def items():
        yield item(1, "r1")
        raise RuntimeError("reader crashed")

    with pytest.raises(RuntimeError):
        importer.import_records(db, "ds", "ragreview", None, items())
    assert db.conn.execute("SELECT count(*) FROM records").fetchone()[0] == 0
    assert not db.conn.in_transaction


def test_foreign_keys_are_enforced(db) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        db.conn.execute("INSERT INTO judge_labels VALUES (999, 'relevant', '0a', 'true', NULL)")


def test_values_orjson_cannot_write_are_stored(db) -> None:
    rec = parse_record({"id": "big", "n": 2**70 + 1, "x": float("nan")})
    importer.import_records(db, "ds", "ragreview", None, [ImportItem(1, rec)])
    assert store_records.find(db, "big").record.data["n"] == 2**70 + 1


def test_new_database_gets_large_pages_and_import_restores_the_collector(db) -> None:
    import gc

    assert db.conn.execute("PRAGMA page_size").fetchone()[0] == 16384
    assert gc.isenabled()
    importer.import_records(db, "d", "ragreview", None, [item(1, "r1")])
    assert gc.isenabled()

    def broken():
        yield item(1, "r2")
        raise RuntimeError("reader failed")

    with pytest.raises(RuntimeError):
        importer.import_records(db, "d", "ragreview", None, broken())
    assert gc.isenabled()
    assert [s.id for s in store_records.iterate(db, "d")] == ["r1"]  # rolled back


@pytest.mark.parametrize(
    "source",
    [
        "handwritten/ragbench/covidqa_test_rows.jsonl",
        "inspectorraget/clapnq_v1.json",
        "factscore/factscore_labeled_ChatGPT.jsonl",
    ],
)
def test_a_database_built_without_key_checks_has_every_key(tmp_path, source) -> None:
    """A first import builds its file with foreign-key checks off (store.db.building):
    every row it wrote must still reference a record, and the file, once in place,
    checks them again."""
    from tests.formats.helpers import FIXTURES, run

    result = run("import", FIXTURES / source, "--db", tmp_path / "built.db")
    assert result.exit_code == 0, result.output
    db = open_database(tmp_path / "built.db")
    assert db.conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert db.conn.execute("SELECT count(*) FROM records").fetchone()[0] > 0
    assert db.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
