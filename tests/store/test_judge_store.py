"""The judge's tables (migration m003_judge) and the one way a run rewrites labels."""

from __future__ import annotations

from ragreview.core.import_items import ImportItem
from ragreview.core.record import parse_record
from ragreview.store import history, importer, judge_store, memory_database
from ragreview.store import records as store_records


def _db_with_record():
    db = memory_database()
    record = parse_record(
        {
            "id": "r1",
            "documents": [{"sentences": [["0a", "A."], ["0b", "B."]]}],
            "response": [["a", "x"]],
            "answer_parts": [["y"]],
        }
    )
    judge = {"relevant": {"0a": True}, "supported": {"a": True}, "part_matched": {"p0": True}}
    importer.import_records(db, "d", "ragreview", None, [ImportItem(1, record, judge)])
    return db, store_records.find(db, "r1").rowid


def test_migration_creates_the_judge_tables():
    db = memory_database()
    assert {
        "judge_cache",
        "judge_runs",
        "judge_errors",
        "judge_batches",
        "judge_batch_items",
    } <= set(db.table_names())
    assert "api_key" not in " ".join(db[t].schema for t in db.table_names() if "judge" in t)


def test_save_result_replaces_only_the_tasks_labels_and_keeps_human_ones():
    db, rowid = _db_with_record()
    history.set_label(db, rowid, "relevant", "0b", True, "ann")
    run = judge_store.start_run(db, "d", "m", "https://user:pw@host.example:8443/v1?k=1", "trace")
    assert judge_store.get_run(db, run)["base_url"] == "https://host.example:8443/v1"
    response = judge_store.CachedResponse('{"ok": true}', 10, 3)
    key = judge_store.cache_key("m", "prompt")
    judge_store.add_error(db, rowid, run, "trace", "earlier failure")
    judge_store.save_result(
        db,
        rowid,
        run,
        "trace",
        ("relevant", "utilized", "supported", "support_keys"),
        {"utilized": {"0b": True}, "supported": {"a": False}},
        cache=(key, "m", response),
    )
    stored = store_records.get(db, rowid)
    # relevant from the import is gone (the task rewrote it), part_matched is not its label
    assert stored.judge == {
        "utilized": {"0b": True},
        "supported": {"a": False},
        "part_matched": {"p0": True},
    }
    assert stored.human == {"relevant": {"0b": True}}
    assert judge_store.label_runs(db, rowid) == {
        "utilized": run,
        "supported": run,
        "part_matched": None,
    }
    assert judge_store.cached(db, key) == response
    assert judge_store.iter_errors(db, unresolved=True) == []
    assert judge_store.has_labels(db, rowid, ["supported"])
    assert not judge_store.has_labels(db, rowid, ["idk"])


def test_cache_key_depends_on_model_and_prompt():
    keys = {
        judge_store.cache_key("m", "ab"),
        judge_store.cache_key("ma", "b"),
        judge_store.cache_key("m2", "ab"),
    }
    assert len(keys) == 3 and all(len(k) == 64 for k in keys)
