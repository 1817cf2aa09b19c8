"""The review screen (terminal, through Pilot) beside another reviewer writing to the
same database file: their commits and leases show without a keypress, ``n`` and
``space`` pass their record by. A served session (ServedApp) takes and drops leases."""

from __future__ import annotations

import shutil
from pathlib import Path

from ragreview.cli.session import open_target
from ragreview.store import history, leases, open_database
from ragreview.store import records as store_records
from ragreview.tui.app import RagreviewApp
from ragreview.tui.served import ServedApp
from ragreview.tui.widgets.metrics_panel import MetricsPanel
from ragreview.tui.widgets.record_list import RecordList

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo.jsonl"


def _opened(tmp_path: Path):
    path = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, path)
    return open_target(str(path))


async def test_another_reviewers_commit_and_lease_show_up(tmp_path) -> None:
    mine = _opened(tmp_path)
    theirs = open_database(tmp_path / "demo.ragreview.db")
    covid_2 = store_records.find(theirs, "covid-2").rowid
    app = RagreviewApp(mine.db, mine.dataset, "alice", session="mine")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.screen
        panel = screen.query_one(MetricsPanel)
        before = panel.values["dataset"]["trace.relevance"]
        # bob, in another process as far as SQLite knows: a lease and a label
        assert leases.take(theirs, covid_2, "bob", "bobs-session") is None
        history.set_label(theirs, covid_2, "relevant", "0a", False, "bob", session="bobs-session")
        await pilot.pause(1.2)
        assert panel.values["dataset"]["trace.relevance"] != before
        assert screen.query_one(RecordList).leased == {covid_2: "bob"}
        assert app.review.stored.id == "covid-1"
        await pilot.press("n")  # covid-2 is bob's: next is markup-1
        assert app.review.stored.id == "markup-1"
        await pilot.press("p", "space")  # covid-1 reviewed, covid-2 passed by
        assert app.review.stored.id == "markup-1"
        assert store_records.find(theirs, "covid-1").status == "reviewed"
        # the terminal UI takes no lease of its own
        assert leases.held_by_others(theirs, "demo", "bobs-session") == {}
    theirs.conn.close()


async def test_a_served_session_leases_what_it_opens_and_lets_go(tmp_path) -> None:
    mine = _opened(tmp_path)
    other = open_database(tmp_path / "demo.ragreview.db")
    covid_1 = store_records.find(other, "covid-1").rowid
    leases.take(other, covid_1, "bob", "bobs-session")
    app = ServedApp(mine.db, mine.dataset, "carol", session="carols")
    async with app.run_test(size=(140, 40)) as pilot:
        assert app.review.stored.id == "covid-2"  # covid-1 is bob's
        assert leases.held_by_others(other, "demo", "bobs-session") == {
            store_records.find(other, "covid-2").rowid: "carol"
        }
        await pilot.press("n")
        held = leases.held_by_others(other, "demo", "bobs-session")
        assert held == {store_records.find(other, "markup-1").rowid: "carol"}
        await pilot.press("p", "p")  # back past covid-2 is bob's covid-1: start of list
        assert app.review.stored.id == "covid-2"
    assert leases.held_by_others(other, "demo", "bobs-session") == {}  # released on exit
    other.conn.close()


def test_only_other_connections_commits_count(tmp_path) -> None:
    from ragreview.tui.model import Review
    from ragreview.tui.others import OtherReviewers

    mine = _opened(tmp_path)
    other = open_database(tmp_path / "demo.ragreview.db")
    review = Review(mine.db, mine.dataset, "alice", session="mine")
    watch = OtherReviewers(review)
    rowid = store_records.find(mine.db, "covid-1").rowid
    assert not watch.committed()
    review.open(rowid)
    review.set("relevant", "0c", True)  # this connection's own commit
    assert not watch.committed()
    history.set_note(other, rowid, "look", "bob", "s")
    assert watch.committed() and not watch.committed()
    other.conn.close()
