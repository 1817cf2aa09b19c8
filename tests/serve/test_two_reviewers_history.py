"""Two reviewers toggling the same label within half a second (the terminal UI and a
browser session): each key resolves, from what that reviewer's screen showed, to the
value it means to set, and the write is recorded under that reviewer even when the
other's write already stored that value. ``ragreview log`` shows both; undo stays each
reviewer's own."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from ragreview.cli.session import open_target
from ragreview.store import history, open_database
from ragreview.store import records as store_records
from ragreview.tui.model import Review
from tests.conftest import subprocess_env

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo.jsonl"


def _log(tmp_path: Path, db: Path) -> list[dict]:
    out = subprocess.run(
        [sys.executable, "-m", "ragreview", "log", str(db), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=subprocess_env(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_both_reviewers_toggles_are_in_the_history(tmp_path) -> None:
    shutil.copy(DEMO, tmp_path / "demo.jsonl")
    opened = open_target(str(tmp_path / "demo.jsonl"))
    db_path = tmp_path / "demo.ragreview.db"
    ann = Review(opened.db, "demo", "Ann", session="ann-terminal")  # `ragreview open`
    bea_db = open_database(db_path)  # a served session: its own process, own connection
    bea = Review(bea_db, "demo", "Bea", session="bea-browser")
    rowid = store_records.find(bea_db, "covid-1").rowid
    ann.open(rowid)
    bea.open(rowid)
    shown = bea.mark("relevant", "0a").value
    assert ann.mark("relevant", "0a").value == shown

    # Ann toggles first; Bea's screen still shows the old value when she toggles too
    assert ann.cycle("relevant", "0a") is not None
    assert bea.mark("relevant", "0a").value == shown  # stale: no reload yet
    assert bea.cycle("relevant", "0a") is not None  # recorded, though the value is stored
    assert bea.mark("relevant", "0a").value is (not shown)
    stored = bea_db.conn.execute(
        "SELECT value, reviewer FROM human_labels WHERE record = ? AND name = 'relevant' "
        "AND target = '0a'",
        (rowid,),
    ).fetchone()
    assert stored == (json.dumps(not shown), "Bea")  # the latest to set it

    events = [e for e in _log(tmp_path, db_path) if e["name"] == "relevant"]
    assert [(e["reviewer"], e["kind"], e["old"], e["new"]) for e in events] == [
        ("Ann", "set", None, not shown),
        ("Bea", "set", not shown, not shown),  # Bea's intent, though nothing changed
    ]

    # undo stays each reviewer's own: Bea's undo takes back her write, which changed
    # nothing, so the value stays Ann's; Ann's undo then takes hers back
    undone = history.undo(bea_db, "Bea", "bea-browser")
    assert undone is not None and (undone.old, undone.new) == (not shown, not shown)
    bea._reload()
    assert bea.mark("relevant", "0a").value is (not shown)
    assert ann.undo() == rowid
    assert ann.mark("relevant", "0a").value is shown
    redone = history.redo(bea_db, "Bea", "bea-browser")  # Bea means her value again
    assert redone is not None and redone.new is (not shown)
    ann._reload()
    assert ann.mark("relevant", "0a").value is (not shown)
    bea_db.conn.close()
    opened.db.conn.close()


def test_a_key_that_changes_nothing_it_meant_writes_no_event(tmp_path) -> None:
    shutil.copy(DEMO, tmp_path / "demo.jsonl")
    opened = open_target(str(tmp_path / "demo.jsonl"))
    review = Review(opened.db, "demo", "Ann", session="s")
    review.open(store_records.find(opened.db, "covid-1").rowid)
    shown = review.mark("relevant", "0a").value
    # a value written without a screen (the CLI, the API), equal to what is stored
    assert review.set("relevant", "0a", shown) is not None  # judge's value, now human
    assert review.set("relevant", "0a", shown) is None
    # a prompt answered with the value already shown: nothing meant, nothing written
    assert review.set("relevant", "0a", shown, seen=shown) is None
    # back to the judge's where no reviewer's label showed: nothing meant either
    assert review.set("relevant", "0b", None, seen=None) is None
    opened.db.conn.close()
