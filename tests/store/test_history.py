"""Human label changes as append-only events: set, revert, undo/redo, mark, notes."""

from __future__ import annotations

import sqlite3

import pytest

from ragreview.core.errors import RagreviewError, RecordError
from ragreview.core.import_items import ImportItem
from ragreview.core.record import parse_record
from ragreview.store import event_reads, history, importer, metric_writes, open_database
from ragreview.store import records as store_records
from ragreview.store import settings as store_settings


@pytest.fixture
def db(tmp_path):
    database = open_database(tmp_path / "h.ragreview.db")
    rec = parse_record(
        {
            "id": "r1",
            "documents": [{"sentences": [["0a", "x"], ["0b", "y"]]}],
            "response": [["a", "A."]],
            "facts": [["f1", "F."]],
        }
    )
    other = parse_record({"id": "r2", "response": [["a", "B."]]})
    importer.import_records(
        database,
        "ds",
        "ragreview",
        None,
        [ImportItem(1, rec, {"relevant": {"0a": True}, "fact": {"f1": "S"}}), ImportItem(2, other)],
    )
    yield database
    database.conn.close()


def rowid(db, rid: str = "r1") -> int:
    return store_records.find(db, rid).rowid


def human(db, rid: str = "r1"):
    return store_records.find(db, rid).human


def kinds(db) -> list[tuple]:
    return [(e.kind, e.name, e.target, e.old, e.new) for e in event_reads.iter_events(db)]


def test_set_label_writes_event_and_human_layer(db) -> None:
    event = history.set_label(db, rowid(db), "relevant", "0a.", False, "ann", reason="off-topic")
    assert event is not None
    assert human(db) == {"relevant": {"0a": False}}
    assert store_records.find(db, "r1").judge == {"relevant": {"0a": True}, "fact": {"f1": "S"}}
    (e,) = event_reads.iter_events(db)
    assert (e.record, e.dataset, e.kind, e.name, e.target, e.old, e.new, e.reviewer, e.reason) == (
        "r1",
        "ds",
        "set",
        "relevant",
        "0a",
        None,
        False,
        "ann",
        "off-topic",
    )
    assert set(e.as_json()) == {
        "record",
        "kind",
        "pass",
        "name",
        "target",
        "old",
        "new",
        "reviewer",
        "at",
        "reason",
        "rule",  # the guideline rule named (docs/align.md); null here
    }
    assert e.as_json()["rule"] is None
    row = db.conn.execute("SELECT reviewer, event FROM human_labels").fetchone()
    assert row == ("ann", e.id)


def test_setting_the_same_value_again_is_no_event(db) -> None:
    assert history.set_label(db, rowid(db), "fact", "f1", "NS", "ann") is not None
    assert history.set_label(db, rowid(db), "fact", "f1", "ns", "ann") is None
    assert len(kinds(db)) == 1


def test_invalid_labels_write_nothing(db) -> None:
    with pytest.raises(RecordError):
        history.set_label(db, rowid(db), "relevant", "9z", True, "ann")
    with pytest.raises(RecordError):
        history.set_label(db, rowid(db), "relevant", "0a", "yes", "ann")
    with pytest.raises(RecordError):
        history.set_label(db, rowid(db), "nonsense", "0a", True, "ann")
    with pytest.raises(RagreviewError):
        history.set_label(db, rowid(db), "relevant", "9z", None, "ann")
    assert kinds(db) == [] and human(db) == {}


def test_revert_to_judge_removes_the_override_through_an_event(db) -> None:
    history.set_label(db, rowid(db), "relevant", "0a", False, "ann")
    assert history.set_label(db, rowid(db), "relevant", "0a", None, "ann") is not None
    assert human(db) == {}
    assert kinds(db) == [
        ("set", "relevant", "0a", None, False),
        ("revert", "relevant", "0a", False, None),
    ]
    assert history.set_label(db, rowid(db), "relevant", "0a", None, "ann") is None


def test_events_are_append_only(db) -> None:
    history.set_label(db, rowid(db), "relevant", "0a", False, "ann")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.conn.execute("UPDATE events SET new = 'true'")
    db.conn.rollback()
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.conn.execute("DELETE FROM events")
    db.conn.rollback()
    assert len(kinds(db)) == 1


def test_undo_and_redo_walk_the_history(db) -> None:
    r = rowid(db)
    history.set_label(db, r, "relevant", "0b", True, "ann")
    history.set_label(db, r, "relevant", "0b", False, "ann")
    undone = history.undo(db, "ann")
    assert undone is not None and (undone.kind, undone.old, undone.new) == ("undo", False, True)
    assert human(db) == {"relevant": {"0b": True}}
    history.undo(db, "ann")
    assert human(db) == {}
    assert history.undo(db, "ann") is None  # nothing left
    redone = history.redo(db, "ann")
    assert redone is not None and (redone.kind, redone.new) == ("redo", True)
    assert human(db) == {"relevant": {"0b": True}}
    history.redo(db, "ann")
    assert human(db) == {"relevant": {"0b": False}}
    assert history.redo(db, "ann") is None
    # undo/redo are events too: 2 sets + 2 undos + 2 redos
    assert [k[0] for k in kinds(db)] == ["set", "set", "undo", "undo", "redo", "redo"]


def test_a_new_change_clears_redo(db) -> None:
    r = rowid(db)
    history.set_label(db, r, "relevant", "0b", True, "ann")
    history.undo(db, "ann")
    history.set_label(db, r, "fact", "f1", "IR", "ann")
    assert history.redo(db, "ann") is None
    assert human(db) == {"fact": {"f1": "IR"}}
    history.undo(db, "ann")
    assert human(db) == {}
    assert history.undo(db, "ann") is None  # the first set was already undone


def test_undo_of_a_revert_restores_the_override(db) -> None:
    r = rowid(db)
    history.set_label(db, r, "relevant", "0a", False, "ann")
    history.set_label(db, r, "relevant", "0a", None, "ann")
    history.undo(db, "ann")
    assert human(db) == {"relevant": {"0a": False}}


def test_undo_is_per_reviewer_and_per_session(db) -> None:
    r = rowid(db)
    history.set_label(db, r, "relevant", "0a", False, "ann", session="s1")
    history.set_label(db, r, "relevant", "0b", True, "bob")
    history.set_label(db, rowid(db, "r2"), "supported", "a", True, "ann", session="s2")
    event = history.undo(db, "ann", session="s1")
    assert event is not None and (event.record, event.target) == ("r1", "0a")
    assert human(db) == {"relevant": {"0b": True}}
    assert human(db, "r2") == {"supported": {"a": True}}
    assert history.undo(db, "ann", session="s1") is None
    assert history.undo(db, "ann").record == "r2"  # no session: all of ann's changes


def test_undo_when_someone_else_already_set_the_value_still_records(db) -> None:
    r = rowid(db)
    history.set_label(db, r, "relevant", "0b", True, "ann")
    history.set_label(db, r, "relevant", "0b", None, "bob")  # bob reverts it
    event = history.undo(db, "ann")
    assert event is not None and event.kind == "undo"
    assert human(db) == {}
    assert history.redo(db, "ann").new is True
    assert human(db) == {"relevant": {"0b": True}}


def test_mark_and_note_are_events(db) -> None:
    r = rowid(db)
    history.mark(db, r, "reviewed", "ann")
    stored = store_records.find(db, "r1")
    assert (stored.status, stored.reviewed_by) == ("reviewed", "ann")
    assert stored.reviewed_at is not None
    history.mark(db, r, "unreviewed", "ann")
    stored = store_records.find(db, "r1")
    assert (stored.status, stored.reviewed_by, stored.reviewed_at) == ("unreviewed", None, None)
    history.set_note(db, r, "check 0b", "ann")
    assert store_records.find(db, "r1").note == "check 0b"
    assert kinds(db) == [
        ("status", "_status", "*", "unreviewed", "reviewed"),
        ("status", "_status", "*", "reviewed", "unreviewed"),
        ("note", "_note", "*", None, "check 0b"),
    ]
    assert history.undo(db, "ann") is None  # status and notes are not label changes
    with pytest.raises(RagreviewError):
        history.mark(db, r, "done", "ann")


def test_iter_events_by_record(db) -> None:
    history.set_label(db, rowid(db), "relevant", "0a", False, "ann")
    history.set_label(db, rowid(db, "r2"), "supported", "a", True, "ann")
    assert [e.record for e in event_reads.iter_events(db, record=rowid(db, "r2"))] == ["r2"]


def test_settings(db) -> None:
    assert store_settings.get_all(db, "ds") == {
        "trace.variant": "ragbench",
        "rgb.variant": "reference",
        "longform.k": 100,
        "deepeval.penalize_ambiguous_claims": False,
    }
    metric_writes.put_setting(db, "ds", "trace.variant", "length")
    metric_writes.put_setting(db, "ds", "longform.k", 64)
    metric_writes.put_setting(db, "ds", "longform.k", 178)
    assert store_settings.get_all(db, "ds")["trace.variant"] == "length"
    assert store_settings.get_all(db, "ds")["longform.k"] == 178
    assert store_settings.get_all(db, "other")["trace.variant"] == "ragbench"
    for name, value in [
        ("trace.variant", "bogus"),
        ("longform.k", 0),
        ("longform.k", "64"),
        ("longform.k", True),
        ("deepeval.penalize_ambiguous_claims", "yes"),
        ("nope", 1),
    ]:
        with pytest.raises(RagreviewError):
            metric_writes.put_setting(db, "ds", name, value)
    assert store_settings.get_all(db, "ds")["longform.k"] == 178


def test_undo_stays_within_the_dataset(db) -> None:
    other = parse_record({"id": "r1", "response": [["a", "C."]]})
    importer.import_records(db, "other", "ragreview", None, [ImportItem(1, other)])
    ds_rowid = store_records.find(db, "r1", "ds").rowid
    history.set_label(db, ds_rowid, "relevant", "0a", False, "ann")
    other_rowid = store_records.find(db, "r1", "other").rowid
    history.set_label(db, other_rowid, "supported", "a", True, "ann")
    event = history.undo(db, "ann", dataset="ds")
    assert event is not None and (event.dataset, event.name) == ("ds", "relevant")
    assert store_records.find(db, "r1", "other").human == {"supported": {"a": True}}
    assert history.undo(db, "ann", dataset="ds") is None
    assert history.redo(db, "ann", dataset="other") is None
    assert history.redo(db, "ann", dataset="ds").dataset == "ds"
