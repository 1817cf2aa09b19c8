"""``ragreview log --json``: every event says its kind and whether it was a blind pass."""

from __future__ import annotations

import json

from ragreview.store import history, open_database
from ragreview.store import records as store_records


def test_log_json_carries_kind_and_pass(ragreview, demo_copy) -> None:
    assert ragreview("import", demo_copy).exit_code == 0
    db_path = demo_copy.with_suffix(".ragreview.db")
    db = open_database(db_path)
    rowid = store_records.find(db, "covid-1").rowid
    history.set_label(db, rowid, "relevant", "0c", True, "ann", blind=True)
    history.set_label(db, rowid, "relevant", "0c", False, "ann", reason="second look")
    history.set_label(db, rowid, "relevant", "0c", None, "ann")  # back to the judge's
    history.undo(db, "ann")
    history.redo(db, "ann")
    history.set_note(db, rowid, "check the dates", "ann")
    history.mark(db, rowid, "reviewed", "ann")
    db.conn.close()

    result = ragreview("log", db_path, "--json")
    assert result.exit_code == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(e["kind"], e["pass"], e["new"]) for e in events] == [
        ("set", "blind", True),
        ("set", None, False),
        ("revert", None, None),
        ("undo", None, False),
        ("redo", None, None),
        ("note", None, "check the dates"),
        ("status", None, "reviewed"),
    ]
    assert events[1]["reason"] == "second look"
