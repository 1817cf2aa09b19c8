"""Pilot tests: keys pressed in the real app, asserted on DB rows and on what is shown."""

from __future__ import annotations

import json

from ragreview.tui.screens.help import HelpScreen
from ragreview.tui.widgets.header import ReviewHeader
from ragreview.tui.widgets.record_list import RecordList
from ragreview.tui.widgets.verdict_bar import VerdictBar

from .conftest import events, human, make_app, text_of


def ids_in_list(app) -> list[str]:
    lst = app.screen.query_one(RecordList)
    return [lst.row(i).id for i in range(len(lst.ids))]


async def test_first_screen_opens_first_unreviewed_with_cursor_on_first_doc_sentence(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert screen.review.stored.id == "covid-1"
        assert screen.sentences.item.key == "0a"
        header = text_of(screen.query_one(ReviewHeader))
        assert "demo" in header and "0/5 reviewed" in header and "trace=ragbench" in header
        assert ids_in_list(app) == ["covid-1", "covid-2", "markup-1", "bio-1", "rgb-1"]
        assert not screen.query_one(RecordList).children  # virtual: no widget per record


async def test_start_skips_reviewed_records_and_cursor_opens_on_a_labelled_item(demo):
    conn = demo.db.conn
    conn.execute("UPDATE records SET status = 'reviewed' WHERE position < 4")
    conn.commit()
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.screen.review.stored.id == "bio-1"  # FActScore: facts carry the labels
        assert app.screen.sentences.item.kind == "fact"
        assert app.screen.sentences.item.key == "f1"


async def test_r_writes_the_override_before_the_row_shows_it(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        row = app.screen.sentences.rows[0]
        assert " R U " in text_of(row) and not row.has_class("-overridden")
        await pilot.press("r")
        await pilot.pause()
        assert human(demo) == {("covid-1", "relevant", "0a"): False}
        ev = events(demo)[-1]
        assert ev[:8] == ("covid-1", "set", "relevant", "0a", None, "false", "alice", None)
        assert ev[8] == "test"
        assert row.has_class("-overridden") and row.has_class("-disagree")
        assert "≠ 0a · U" in text_of(row)
        # the list marks the record as disagreeing
        assert app.screen.query_one(RecordList).row(0).disagrees
        await pilot.press("r")  # back to the judge's value: still a human label, agreeing
        await pilot.pause()
        assert human(demo) == {("covid-1", "relevant", "0a"): True}
        assert row.has_class("-overridden") and not row.has_class("-disagree")


async def test_undo_and_redo_restore_db_and_screen(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("j", "j", "u")  # 0c: not utilized -> utilized
        await pilot.pause()
        assert human(demo) == {("covid-1", "utilized", "0c"): True}
        row = app.screen.sentences.rows[2]
        assert " · U " in text_of(row)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert human(demo) == {}
        assert " · · " in text_of(row) and not row.has_class("-overridden")
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert human(demo) == {("covid-1", "utilized", "0c"): True}
        assert [e[1] for e in events(demo)] == ["set", "undo", "redo"]


async def test_undo_follows_the_change_to_its_record(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("r", "n")
        await pilot.pause()
        assert app.screen.review.stored.id == "covid-2"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.screen.review.stored.id == "covid-1"
        assert human(demo) == {}


async def test_space_marks_reviewed_and_opens_next_unreviewed(demo):
    conn = demo.db.conn
    conn.execute("UPDATE records SET status = 'reviewed' WHERE id = 'covid-2'")
    conn.commit()
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("space")
        await pilot.pause()
        status = dict(conn.execute("SELECT id, status FROM records").fetchall())
        assert status["covid-1"] == "reviewed"
        assert app.screen.review.stored.id == "markup-1"  # covid-2 already reviewed
        assert "2/5 reviewed" in text_of(app.screen.query_one(ReviewHeader))
        assert conn.execute("SELECT reviewer FROM events WHERE kind = 'status'").fetchall() == [
            ("alice",)
        ]


async def test_next_previous_and_next_disagreement(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("n", "n")
        await pilot.pause()
        assert app.screen.review.stored.id == "markup-1"
        await pilot.press("p")
        await pilot.pause()
        assert app.screen.review.stored.id == "covid-2"
        await pilot.press("j", "u")  # 0b utilized true -> false: a disagreement on covid-2
        await pilot.press("n", "n", "n")
        await pilot.pause()
        assert app.screen.review.stored.id == "rgb-1"
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert app.screen.review.stored.id == "covid-2"
        assert app.screen.sentences.item.key == "0b"


async def test_filters_and_search(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("r", "space")  # covid-1: override, reviewed
        await pilot.pause()
        await pilot.press("3")
        await pilot.pause()
        assert ids_in_list(app) == ["covid-1"]
        assert app.screen.review.stored.id == "covid-1"  # the open record left the list
        await pilot.press("2")
        await pilot.pause()
        assert ids_in_list(app) == ["covid-2", "markup-1", "bio-1", "rgb-1"]
        await pilot.press("1", "5")
        await pilot.pause()
        assert ids_in_list(app) == ["covid-1"]
        await pilot.press("5", "t")  # first task alphabetically: longform
        await pilot.pause()
        assert ids_in_list(app) == ["bio-1"]
        await pilot.press("t", "t", "t")  # rgb-noise, trace, then no task filter
        await pilot.pause()
        assert len(ids_in_list(app)) == 5
        await pilot.press("slash")
        await pilot.pause()
        await pilot.press(*"nobel", "enter")
        await app.workers.wait_for_complete()  # the search runs in a thread worker
        await pilot.pause()
        assert ids_in_list(app) == ["rgb-1"]
        assert app.screen.review.stored.id == "rgb-1"
        assert "/nobel" in text_of(app.screen.query_one(ReviewHeader))


async def test_fact_verdict_support_keys_note_and_revert(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        # support keys on covid-1's response sentence b (judge: unsupported, no keys)
        await pilot.press(*"jjjjj", "j")
        await pilot.pause()
        assert app.screen.sentences.item.key == "b"
        await pilot.press("l")
        await pilot.pause()
        await pilot.press(*"1a 1b", "enter")
        await pilot.pause()
        assert human(demo)[("covid-1", "support_keys", "b")] == ["1a", "1b"]
        await pilot.press("s")
        await pilot.pause()
        assert human(demo)[("covid-1", "supported", "b")] is True
        await pilot.press("backspace")  # revert both labels of the sentence
        await pilot.pause()
        assert human(demo) == {}
        # fact label on bio-1, rejected on rgb-1
        await pilot.press("n", "n", "n")
        await pilot.pause()
        assert app.screen.review.stored.id == "bio-1"
        await pilot.press("f")  # the cursor opens on the first fact f1; S -> NS
        await pilot.pause()
        assert human(demo) == {("bio-1", "fact", "f1"): "NS"}
        await pilot.press("n", "x")
        await pilot.pause()
        assert human(demo)[("rgb-1", "rejected", "*")] is True
        assert "rejected yes (judge no)" in text_of(app.screen.query_one(VerdictBar))
        await pilot.press("m")
        await pilot.pause()
        await pilot.press(*"check me", "enter")
        await pilot.pause()
        note = demo.db.conn.execute("SELECT note FROM records WHERE id = 'rgb-1'").fetchone()
        assert note == ("check me",)


async def test_key_on_wrong_item_changes_nothing(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("s", "f", "l")  # on a document sentence
        await pilot.pause()
        assert human(demo) == {} and events(demo) == []


async def test_blind_mode_hides_then_reveals_and_records_both_passes(demo):
    app = make_app(demo, blind=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        row = app.screen.sentences.rows[0]
        # judge says relevant + utilized; hidden, the row shows nothing set
        assert " · · " in text_of(row)
        assert "BLIND" in text_of(app.screen.query_one(ReviewHeader))
        assert app.screen.query_one("MetricsPanel").values["record"] == {} or all(
            judge is None
            for judge, _ in app.screen.query_one("MetricsPanel").values["record"].values()
        )
        await pilot.press("r")  # blind pass: relevant
        await pilot.pause()
        assert " R · " in text_of(row) and not row.has_class("-disagree")
        await pilot.press("b")  # reveal
        await pilot.pause()
        assert " R U " in text_of(row)
        assert "BLIND" not in text_of(app.screen.query_one(ReviewHeader))
        await pilot.press("u")  # final pass: not utilized (judge: utilized)
        await pilot.pause()
        assert row.has_class("-disagree")
        passes = [(e[2], e[7]) for e in events(demo)]
        assert passes == [("relevant", "blind"), ("utilized", None)]
        await pilot.press("n")  # the next record is blind again
        await pilot.pause()
        assert " · · " in text_of(app.screen.sentences.rows[0])


async def test_help_lists_the_keys_and_labels_of_the_record(demo):
    app = make_app(demo)
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = "\n".join(text_of(s) for s in app.screen.query("Static"))
        for title in ("label: Toggle relevant", "edit: Undo", "view: Reveal / hide judge"):
            assert title in shown
        for label in ("relevant", "support_keys"):
            assert label in shown
        # a TRACe record: no fact keys or labels, no fact / statement edits
        for other in ("Cycle fact label", "Split fact", "Add fact", "answerability", "FActScore"):
            assert other not in shown, other
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_export_writes_reviewed_labels(demo, tmp_path):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("r", "ctrl+e")
        await app.workers.wait_for_complete()
        await pilot.pause()
    out = tmp_path / "demo.reviewed.jsonl"
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 5
    assert lines[0]["labels"]["human"]["relevant"] == {"0a": False}


async def test_record_line_shows_id_status_and_note_literally(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        info = app.screen.sentences.info
        assert text_of(info).strip().startswith("covid-1 · trace · unreviewed")
        await pilot.press("m")
        await pilot.pause()
        await pilot.press(*"[b]odd[/b]", "enter")
        await pilot.pause()
        assert "✎ [b]odd[/b]" in text_of(info)


async def test_marks_follow_the_record_family(demo, tmp_path):
    from .conftest import opened, write_records

    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("n", "n", "n", "n")
        await pilot.pause()
        rows = app.screen.sentences.rows
        doc = next(i for i, row in enumerate(rows) if row.item.key == "0a")
        assert app.screen.review.stored.id == "rgb-1" and rows[doc].item.kind == "doc"
        assert rows[doc].marks == []  # no R/U on an RGB record's documents
        app.screen.sentences.move_to(doc)
        await pilot.press("r")  # a TRACe key on an RGB record: refused, nothing written
        await pilot.pause()
        assert rows[doc].marks == [] and human(demo) == {}
    bare = opened(
        write_records(tmp_path, [{"id": "x", "documents": [{"sentences": [["0a", "S."]]}]}])
    )
    app = make_app(bare)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()  # no task, no labels: every mark is offered
        assert [m.name for m in app.screen.sentences.rows[0].marks] == ["relevant", "utilized"]
