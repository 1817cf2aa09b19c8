"""``/`` with ``field=value``: filters by source fields and by label values, on the real
fixtures through Pilot; the counts are checked against SQL written out here."""

from __future__ import annotations

import json

import pytest

from ragreview.core.errors import RagreviewError
from ragreview.core.where import Condition, parse
from ragreview.tui.widgets.header import ReviewHeader

from .conftest import make_app, text_of
from .test_families import FIXTURES, goto, imported, status


async def search(app, pilot, text: str) -> None:
    await pilot.press("slash", "ctrl+u", *text, "enter")
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


def test_parse_reads_fields_layers_words_and_quotes():
    query = parse('model=gpt judge.fact=IR supported!=false dataset="MT-RAG Authors" storm')
    assert query.conditions == (
        Condition("model", "gpt"),
        Condition("fact", "IR", layer="judge"),
        Condition("supported", "false", negate=True, layer="effective"),
        Condition("dataset", "MT-RAG Authors"),
    )
    assert query.text == "storm"
    with pytest.raises(RagreviewError, match="no value"):
        parse("turn=")
    with pytest.raises(RagreviewError, match="quotation"):
        parse('model="gpt')


async def test_filter_by_source_field_inspectorraget_model(tmp_path):
    o = imported(tmp_path, FIXTURES / "inspectorraget" / "clapnq_v1.json")
    app = make_app(o)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await search(app, pilot, "model=llama")
        ids = list(app.screen.records.ids)
        expected = [
            r
            for (r,) in o.db.conn.execute(
                "SELECT rowid FROM records WHERE json_extract(data, '$.model') = 'llama' "
                "ORDER BY position"
            )
        ]
        assert ids == expected and len(ids) == 100
        assert app.screen.review.stored.record.data["model"] == "llama"
        assert "model=llama" in text_of(app.screen.query_one(ReviewHeader))
        assert "100 records match model=llama" in status(app)
        # and the annotators' values: llama answers an annotator rated unfaithful (1)
        await search(app, pilot, "model=llama annotator.faithfulness=1")
        rows = o.db.conn.execute(
            "SELECT DISTINCT l.record FROM reviewer_labels l JOIN records r ON r.rowid = l.record "
            "WHERE json_extract(r.data, '$.model') = 'llama' AND l.name = 'faithfulness' "
            "AND l.value = '\"1\"' ORDER BY r.position"
        ).fetchall()
        assert list(app.screen.records.ids) == [r for (r,) in rows] and len(rows) == 14
        await pilot.press("1")  # every filter off
        await pilot.pause()
        await app.workers.wait_for_complete()  # the list past its head is read in a thread
        await pilot.pause()
        assert len(app.screen.records.ids) == 400


async def test_filter_by_turn_of_mtrag_ids(tmp_path):
    o = imported(tmp_path, FIXTURES / "mtrag" / "responses-10.jsonl")
    app = make_app(o)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await search(app, pilot, "turn=2")
        shown = [o.db.conn.execute("SELECT id FROM records WHERE rowid = ?", (r,)).fetchone()[0]
                 for r in app.screen.records.ids]  # fmt: skip
        assert shown == [rid for (rid,) in o.db.conn.execute(
            "SELECT id FROM records WHERE id LIKE '%::2' ORDER BY position")]  # fmt: skip
        assert shown and all(rid.endswith("::2") for rid in shown)


async def test_filter_by_label_value_judge_and_in_force(tmp_path):
    """ "Facts the judge marked IR", then the label in force once the reviewer moves one."""
    o = imported(tmp_path, FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl")
    app = make_app(o)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await search(app, pilot, "judge.fact=IR")
        judged_ir = [r for (r,) in o.db.conn.execute(
            "SELECT DISTINCT j.record FROM judge_labels j JOIN records r ON r.rowid = j.record "
            "WHERE j.name = 'fact' AND j.value = '\"IR\"' ORDER BY r.position")]  # fmt: skip
        assert list(app.screen.records.ids) == judged_ir and len(judged_ir) == 109
        assert "109 records match judge.fact=IR" in status(app)
        # a record with exactly one IR fact: the reviewer relabels it S (f cycles IR → S)
        rowid, key = next(
            (r, t)
            for r, t, n in o.db.conn.execute(
                "SELECT record, min(target), count(*) FROM judge_labels WHERE name = 'fact' "
                "AND value = '\"IR\"' GROUP BY record ORDER BY record"
            )
            if n == 1
        )
        app.screen.open_record(rowid)
        await pilot.pause()
        await goto(app, pilot, key)
        await pilot.press("f")
        await pilot.pause()
        rid = app.screen.review.stored.id
        assert (
            json.loads(
                o.db.conn.execute(
                    "SELECT value FROM human_labels WHERE record = ? AND target = ?", (rowid, key)
                ).fetchone()[0]
            )
            == "S"
        )
        await search(app, pilot, "fact=IR")  # in force: the reviewer's S wins
        assert rowid not in app.screen.records.ids
        assert len(app.screen.records.ids) == 108
        await search(app, pilot, "judge.fact=IR human.fact=S")
        assert list(app.screen.records.ids) == [rowid], rid


async def test_filter_judge_said_unsupported(tmp_path):
    """ "Records where the judge said unsupported" (TRACe response sentences)."""
    o = imported(tmp_path, FIXTURES / "handwritten" / "ragbench" / "covidqa_test_rows.jsonl")
    app = make_app(o)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await search(app, pilot, "judge.supported=false")
        expected = [r for (r,) in o.db.conn.execute(
            "SELECT DISTINCT j.record FROM judge_labels j JOIN records r ON r.rowid = j.record "
            "WHERE j.name = 'supported' AND j.value = 'false' ORDER BY r.position")]  # fmt: skip
        assert expected and list(app.screen.records.ids) == expected
        await search(app, pilot, 'model="gpt')
        assert "quotation" in status(app)
