"""Every family's real fixture in the real app: each applicable key writes its label and
moves the panel's number (computed by hand below); every other key writes nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragreview.tui.actions import BY_ID
from ragreview.tui.screens.prompt import PromptScreen
from ragreview.tui.widgets.header import ReviewHeader
from ragreview.tui.widgets.key_bar import StatusLine
from ragreview.tui.widgets.metrics_panel import MetricsPanel
from ragreview.tui.widgets.verdict_bar import VerdictBar
from tests.conftest import in_process

from .conftest import REPO, events, human, make_app, opened, settled, text_of

FIXTURES = REPO / "fixtures"
SHARED_RGB = REPO.parent / "shared" / "fixtures" / "rgb"
LABEL_KEYS = {a.id: a.keys.split(",")[0] for a in BY_ID.values() if a.is_label}


def imported(tmp_path: Path, source: Path):
    path = tmp_path / source.name
    shutil.copy(source, path)
    return opened(path)


def record_value(app, name: str) -> tuple[float | None, float | None]:
    return app.screen.query_one(MetricsPanel).values["record"][name]


async def press_refused(app, pilot, o, action_ids) -> None:
    """Keys of other families: nothing written, one line says so."""
    before = events(o)
    for action_id in action_ids:
        await pilot.press(LABEL_KEYS[action_id])
        await pilot.pause()
        assert not isinstance(app.screen, PromptScreen), action_id
        assert events(o) == before, action_id
        line = status(app)
        assert "not on this record" in line or "applies to" in line, (action_id, line)


def status(app) -> str:
    """The one line the screen says things on."""
    return text_of(app.screen.query_one(StatusLine))


def others(*applicable: str) -> list[str]:
    return [a for a in LABEL_KEYS if a not in applicable]


async def goto(app, pilot, key: str) -> None:
    rows = app.screen.sentences.rows
    # as a reviewer reads first: the rows below the first screenful are mounted after
    # the first frame (test_first_screen covers a key that comes before them)
    await settled(pilot, lambda: all(row.is_mounted for row in rows))
    await pilot.pause()
    app.screen.sentences.move_to(next(i for i, r in enumerate(rows) if r.item.key == key))
    await pilot.pause()


async def test_trace_ragbench_keys(tmp_path):
    o = imported(tmp_path, FIXTURES / "handwritten" / "ragbench" / "covidqa_test_rows.jsonl")
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.screen.review.stored.id == "covidqa-17"
        await press_refused(app, pilot, o, others(*TRACE_KEYS))
        # judge: 0a 0b 1a relevant and utilized of 5 sentences; a, b supported
        assert record_value(app, "trace.relevance") == (0.6, 0.6)
        await pilot.press("r")  # 0a not relevant: relevance 2/5
        await pilot.pause()
        assert human(o) == {("covidqa-17", "relevant", "0a"): False}
        assert record_value(app, "trace.relevance") == (0.6, pytest.approx(0.4))
        await pilot.press("u")  # 0a not utilized: utilization 2/5
        await pilot.pause()
        assert human(o)[("covidqa-17", "utilized", "0a")] is False
        assert record_value(app, "trace.utilization") == (0.6, pytest.approx(0.4))
        assert "0.600→0.400" in text_of(app.screen.query_one(MetricsPanel))
        await goto(app, pilot, "a")
        await pilot.press("s")  # a unsupported: adherence (all supported) 1 -> 0
        await pilot.pause()
        assert human(o)[("covidqa-17", "supported", "a")] is False
        assert record_value(app, "trace.adherence") == (1.0, 0.0)
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("ctrl+u", *"0c", "enter")
        await pilot.pause()
        assert human(o)[("covidqa-17", "support_keys", "a")] == ["0c"]


TRACE_KEYS = ("toggle-relevant", "toggle-utilized", "toggle-supported", "edit-support-keys")


@pytest.mark.skipif(not SHARED_RGB.is_dir(), reason="RGB data is not redistributable")
async def test_rgb_counterfactual_data_file_keys(tmp_path):
    o = imported(tmp_path, SHARED_RGB / "en_fact.json")
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        applicable = ("toggle-rejected", "toggle-error-detected", "toggle-supported")
        await press_refused(app, pilot, o, others(*applicable))
        assert app.screen.sentences.item.key == "p0"  # the answer part comes first
        # a data file without predictions has no output to judge: "rejected", "error
        # detected" and "answer part matched" are refused with the reason, nothing is
        # written and the metrics stay undefined
        before = events(o)
        for key in ("x", "e", "s"):
            await pilot.press(key)
            await pilot.pause()
            assert "no prediction: no output for" in status(app), key
        assert events(o) == before and human(o) == {}
        assert record_value(app, "rgb.rejected") == (None, None)
        assert record_value(app, "rgb.error_detected") == (None, None)


async def test_rgb_noise_prediction_refuses_error_detected(tmp_path):
    name = "prediction_en_ModelX_temp0.7_noise0.4_passage5_correct0.0.json"
    o = imported(tmp_path, FIXTURES / "handwritten" / "rgb" / name)
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await press_refused(app, pilot, o, others("toggle-rejected", "toggle-supported"))
        assert "error" not in text_of(app.screen.query_one(VerdictBar))
        await goto(app, pilot, "p0")
        await pilot.press("s")  # judge: matched -> not: the record is no longer correct
        await pilot.pause()
        assert human(o) == {("0", "part_matched", "p0"): False}
        assert record_value(app, "rgb.correct") == (1.0, 0.0)


async def test_mtrag_keys(tmp_path):
    o = imported(tmp_path, FIXTURES / "mtrag" / "responses-10.jsonl")
    app = make_app(o)
    rid = "dd6b6ffd177f2b311abe676261279d2f::1"
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        applicable = ("cycle-idk", "cycle-answerability", "cycle-underspecified", "set-rating")
        await press_refused(app, pilot, o, others(*applicable))
        # idk_conditioned (get_idk_underspec_score): an UNANSWERABLE question scores 1
        # iff the response says "I don't know" (idk 1), else 0; rb_agg itself is 0 here
        assert record_value(app, "mtrag.rb_agg_idk") == (0.0, 0.0)
        await pilot.press("i", "i", "i")  # no idk verdict yet: 0, then 0.5, then 1
        await pilot.pause()
        assert human(o) == {(rid, "idk", "*"): 1}
        assert record_value(app, "mtrag.rb_agg_idk") == (0.0, 1.0)
        await pilot.press("a")  # judge UNANSWERABLE -> PARTIAL: answerable, idk 1 -> 0
        await pilot.pause()
        assert human(o)[(rid, "answerability", "*")] == "PARTIAL"
        assert record_value(app, "mtrag.rb_agg_idk") == (0.0, 0.0)
        await pilot.press("U")
        await pilot.pause()
        assert human(o)[(rid, "underspecified", "*")] == 0
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*"8", "enter")
        await pilot.pause()
        assert human(o)[(rid, "rb_llm_rating", "*")] == 8
        bar = text_of(app.screen.query_one(VerdictBar))
        assert "idk 1" in bar and "answer PARTIAL (judge UNANSWERABLE)" in bar
        assert "rating 8" in bar
        # the response length counts characters: a whole number, not 275.000
        assert "275→275" in text_of(app.screen.query_one(MetricsPanel))


async def test_factscore_keys(tmp_path):
    o = imported(tmp_path, FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl")
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await press_refused(app, pilot, o, others("cycle-fact"))
        assert app.screen.sentences.item.key == "f1"
        # Lanny Flaherty: 7 S, 19 NS, 9 IR; precision = S / (S + NS) = 7/26
        assert record_value(app, "longform.precision") == (pytest.approx(7 / 26),) * 2
        await pilot.press("f")  # f1 S -> NS: 6/26
        await pilot.pause()
        assert human(o) == {("Lanny Flaherty", "fact", "f1"): "NS"}
        assert record_value(app, "longform.precision")[1] == pytest.approx(6 / 26)
        assert record_value(app, "longform.supported") == (7.0, 6.0)
        panel = text_of(app.screen.query_one(MetricsPanel))
        assert "0.269→0.231" in panel and "7→6" in panel and "19→20" in panel


async def test_ragas_annotation_verdict_with_reason(tmp_path):
    o = imported(tmp_path, FIXTURES / "ragas" / "annotated_data.json")
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await press_refused(app, pilot, o, others("toggle-verdict"))
        screen = app.screen
        assert "verdict yes" in text_of(screen.query_one(VerdictBar))
        reasons = text_of(screen.sentences.record_reasons)
        assert "judge › verdict: The response effectively addresses" in reasons
        await pilot.press("v")
        await pilot.pause()
        assert human(o)[("1", "verdict", "*")] is False  # 5 others came with the file
        assert "verdict no (judge yes)" in text_of(screen.query_one(VerdictBar))
        await pilot.press("R")  # a reason for the override
        await pilot.pause()
        await pilot.press(*"too long", "enter")
        await pilot.pause()
        reason = o.db.conn.execute(
            "SELECT kind, name, reason FROM events ORDER BY id DESC LIMIT 1"
        ).fetchone()
        assert reason == ("reason", "verdict", "too long")
        await pilot.press("z")  # the judge's reasoning folds away
        await pilot.pause()
        assert not screen.sentences.record_reasons.display


async def test_ragas_reference_shows_and_home_brings_back_the_question(tmp_path):
    o = imported(tmp_path, FIXTURES / "ragas" / "edited_chain_runs.json")
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view = app.screen.sentences
        text = "\n".join(text_of(w) for w in view.children)
        assert "reference: The Theory of Sensory Adaptation refers to" in text
        await pilot.press("end")
        assert await settled(pilot, lambda: view.scroll_y == view.max_scroll_y > 0)
        await pilot.press("home")
        assert await settled(pilot, lambda: view.scroll_y == 0), view.scroll_y
        await pilot.press("pagedown", "k")
        # k on the first item shows the record's top
        assert await settled(pilot, lambda: view.scroll_y == 0), view.scroll_y


async def test_filter_all_clears_disagreement_and_sample_filter(tmp_path, run_cli):
    o = imported(tmp_path, FIXTURES / "ragas" / "annotated_data.json")
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("5")
        await pilot.pause()
        assert screen.records.filter.disagreement and len(screen.records.ids) == 5
        await pilot.press("1")
        await pilot.pause()
        assert not screen.records.filter.disagreement and len(screen.records.ids) == 21
        await pilot.press("7")  # no sample drawn yet
        await pilot.pause()
        assert not screen.records.filter.sample
        assert "no sample drawn" in status(app)
        drawn = run_cli("sample", tmp_path / "annotated_data.ragreview.db", "--n", "4")
        assert drawn.returncode == 0, drawn.stderr
        await pilot.press("7")
        await pilot.pause()
        assert screen.records.filter.sample and len(screen.records.ids) == 4
        assert "[all sample]" in text_of(screen.query_one(ReviewHeader))
        await pilot.press("1")
        await pilot.pause()
        assert len(screen.records.ids) == 21


def facts_of(o, rid: str) -> list:
    row = o.db.conn.execute("SELECT data FROM records WHERE id = ?", (rid,)).fetchone()
    return json.loads(row[0])["facts"]


async def test_facts_add_delete_edit_split_are_undoable_events(tmp_path):
    o = imported(tmp_path, FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl")
    rid = "Lanny Flaherty"
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        precision = lambda: record_value(app, "longform.precision")[1]  # noqa: E731
        assert len(facts_of(o, rid)) == 35 and precision() == pytest.approx(7 / 26)
        await pilot.press("D")  # f1 (S) deleted: 6 S of 25 labelled
        await pilot.pause()
        assert [f[0] for f in facts_of(o, rid)][:2] == ["f2", "f3"]
        assert precision() == pytest.approx(6 / 25)
        assert events(o)[-1][1:3] == ("items", "_facts")
        await pilot.press("ctrl+z")  # back, with its label
        await pilot.pause()
        assert facts_of(o, rid)[0][:2] == ["f1", "Lanny Flaherty is an American."]
        assert precision() == pytest.approx(7 / 26)
        assert app.screen.sentences.rows[0].item.key == "f1"
        await pilot.press("E", "ctrl+u", *"Lanny Flaherty is a US citizen.", "enter")
        await pilot.pause()
        assert facts_of(o, rid)[0] == ["f1", "Lanny Flaherty is a US citizen.", "a"]
        await pilot.press("A", *"He acts.", "enter")  # after f1; unlabelled
        await pilot.pause()
        assert facts_of(o, rid)[1] == ["f36", "He acts.", "a"]
        assert app.screen.sentences.item.key == "f36"
        assert precision() == pytest.approx(7 / 26)
        await pilot.press("f")  # label the new fact S: 8/27
        await pilot.pause()
        assert human(o)[(rid, "fact", "f36")] == "S"
        assert precision() == pytest.approx(8 / 27)
        await pilot.press("vertical_line", "ctrl+u", *"He acts|on stage", "enter")
        await pilot.pause()
        assert [f[:2] for f in facts_of(o, rid)[1:3]] == [["f36", "He acts"], ["f37", "on stage"]]
        assert "He acts" in text_of(app.screen.sentences.rows[1])
        await pilot.press("ctrl+z", "ctrl+z")  # the split, then the S label
        await pilot.pause()
        assert [f[0] for f in facts_of(o, rid)[:3]] == ["f1", "f36", "f2"]
        assert (rid, "fact", "f36") not in human(o)


async def test_item_edit_keys_refused_where_there_are_no_facts(tmp_path):
    o = imported(tmp_path, FIXTURES / "mtrag" / "responses-10.jsonl")
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        before = events(o)
        for key in ("A", "D", "E", "vertical_line"):
            await pilot.press(key)
            await pilot.pause()
            assert not isinstance(app.screen, PromptScreen)
        assert events(o) == before
        assert "no facts or statements to edit here (mtrag)" in status(app)


def test_source_export_refuses_edited_facts_and_ragreview_export_keeps_them(tmp_path):
    from ragreview.core.errors import RagreviewError
    from ragreview.services import export
    from ragreview.store import history, item_edits

    o = imported(tmp_path, FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl")
    rowid = o.db.conn.execute("SELECT rowid FROM records WHERE id = 'Lanny Flaherty'").fetchone()
    item_edits.delete(o.db, rowid[0], "fact", "f2", "alice", "s1")
    with pytest.raises(RagreviewError, match="1 records have edited facts .*Lanny Flaherty"):
        export.export(o.db, o.dataset, tmp_path / "out.jsonl", as_="factscore")
    assert not (tmp_path / "out.jsonl").exists()
    export.export(o.db, o.dataset, tmp_path / "gold.jsonl", as_="ragreview")
    first = json.loads((tmp_path / "gold.jsonl").read_text().splitlines()[0])
    assert [f[0] for f in first["facts"]][:2] == ["f1", "f3"]
    history.undo(o.db, "alice", "s1")  # back as imported: the source format holds it again
    assert export.export(o.db, o.dataset, tmp_path / "out.jsonl", as_="factscore").count == 183


RAGAS_ROW = {  # hand-written in ragas' v2 result shape (see docs/formats.md)
    "user_input": "Where is the Eiffel Tower?",
    "retrieved_contexts": ["The Eiffel Tower is in Paris.", "Bananas are yellow."],
    "response": "It is in Paris. It is 300 m tall.",
    "reference": "The Eiffel Tower is in Paris, France.",
    "statements": [
        {"statement": "The tower is in Paris.", "reason": "Context 1 says so.", "verdict": 1},
        {"statement": "The tower is 300 m tall.", "reason": "No context says it.", "verdict": 0},
    ],
    "classifications": [
        {"statement": "It is in Paris.", "reason": "In context 1.", "attributed": 1},
        {"statement": "It is in France.", "reason": "Not stated.", "attributed": 0},
    ],
    "context_precision_verdicts": [
        {"reason": "Answers the question.", "verdict": 1},
        {"reason": "Unrelated.", "verdict": 0},
    ],
}


async def test_ragas_statements_contexts_and_their_reasons(tmp_path):
    from .conftest import write_records

    o = opened(write_records(tmp_path, [RAGAS_ROW], name="ragas_v2"))
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        applicable = ("toggle-supported", "toggle-context-useful")
        await press_refused(app, pilot, o, others(*applicable))
        rows = app.screen.sentences.rows
        assert [r.item.key for r in rows[:4]] == ["s1", "s2", "r1", "r2"]
        assert "judge › statement: Context 1 says so." in text_of(rows[0])
        # faithfulness = true statements / statements = 1/2
        assert record_value(app, "ragas.faithfulness") == (0.5, 0.5)
        await pilot.press("j", "s")  # s2 false -> true: 2/2
        await pilot.pause()
        assert human(o) == {("1", "statement", "s2"): True}
        assert record_value(app, "ragas.faithfulness") == (0.5, 1.0)
        await pilot.press("j", "j", "s")  # r2 not attributed -> attributed: recall 1/2 -> 2/2
        await pilot.pause()
        assert human(o)[("1", "attributed", "r2")] is True
        assert record_value(app, "ragas.context_recall") == (0.5, 1.0)
        await goto(app, pilot, "1a")
        await pilot.press("c")  # context 1 useful: verdicts [1, 1], precision 1
        await pilot.pause()
        assert human(o)[("1", "context_useful", "c1")] is True
        assert record_value(app, "ragas.context_precision")[1] == pytest.approx(1.0)
        await goto(app, pilot, "s1")
        await pilot.press("vertical_line", "ctrl+u", *"The tower|is in Paris", "enter")
        await pilot.pause()
        statements = json.loads(o.db.conn.execute("SELECT data FROM records").fetchone()[0])[
            "statements"
        ]
        assert statements[:2] == [["s1", "The tower"], ["s3", "is in Paris"]]
        # s1 true, s3 unlabelled (not true), s2 true (yours): 2/3
        assert record_value(app, "ragas.faithfulness")[1] == pytest.approx(2 / 3)


async def test_merged_file_shows_conflicts_and_6_filters_them(tmp_path):
    for reviewer, value in (("ann", "false"), ("bob", "true")):
        folder = tmp_path / reviewer
        folder.mkdir()
        shutil.copy(REPO / "fixtures" / "demo.jsonl", folder / "demo.jsonl")
        db = folder / "demo.ragreview.db"
        who = ("--reviewer", reviewer)
        for args in (("import", folder / "demo.jsonl"), ("label", db, "covid-1", "relevant", "0a", value, *who), ("mark", db, "covid-1", "--reviewed", *who)):  # fmt: skip
            done = in_process(args, tmp_path)  # the setup: in process, before the app
            assert done.exit_code == 0, done.stderr
    merged = tmp_path / "merged.db"
    done = in_process(["merge", tmp_path / "ann" / "demo.ragreview.db", tmp_path / "bob" / "demo.ragreview.db", "--into", merged], tmp_path)  # fmt: skip
    assert done.exit_code == 0, done.stderr
    o = opened(merged)
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        # (told once the whole list is read, after the first screen)
        message = "1 records have reviewer conflicts: 6 lists them"
        assert await settled(pilot, lambda: message in status(app)), status(app)
        await pilot.press("6")
        await pilot.pause()
        screen = app.screen
        assert [screen.records.row(i).id for i in range(len(screen.records.ids))] == ["covid-1"]
        assert screen.review.stored.id == "covid-1"
        text = "\n".join(text_of(w) for w in screen.sentences.children)
        assert "⚑ reviewer conflict: relevant 0a" in text
        assert "[all conflicts]" in text_of(screen.query_one(ReviewHeader))


async def test_blind_hides_the_dataset_judge_values_and_deltas_too(tmp_path):
    o = imported(tmp_path, FIXTURES / "handwritten" / "ragbench" / "covidqa_test_rows.jsonl")
    app = make_app(o, blind=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("r")  # blind: 0a shows not relevant, so r sets it relevant
        await pilot.pause()
        panel = app.screen.query_one(MetricsPanel)
        assert panel.values["dataset"]["trace.relevance"][0] is None
        shown = text_of(panel)
        assert "blind" in shown and "→" not in shown and "+0." not in shown


async def test_judge_reasoning_of_safe_facts_and_rgb_judge_output(tmp_path):
    safe = imported(tmp_path, FIXTURES / "handwritten" / "safe" / "2024-04-01-12-00-00-SAFE.json")
    app = make_app(safe)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        first = app.screen.sentences.rows[0]
        assert first.item.key == "f1"
        shown = " ".join(text_of(first).split())  # wrapped at 80 columns
        assert "judge › fact: Searching... so the answer is [Supported]" in shown
        await pilot.press("z")  # folded away, and back
        await pilot.pause()
        assert "judge ›" not in text_of(first)
    name = "prediction_en_ModelX_temp0.7_noise1.0_passage5_correct0.0_chatgpt.json"
    rgb = imported(tmp_path, FIXTURES / "handwritten" / "rgb" / name)
    app = make_app(rgb)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        reasons = " ".join(text_of(app.screen.sentences.record_reasons).split())
        assert (
            "judge › not_addressed: No, the question is not addressed by the documents." in reasons
        )
        # reject_evalue.py's verdict is a verdict of its own, beside evalue.py's
        bar = text_of(app.screen.query_one(VerdictBar))
        assert "rejected yes" in bar and "not addressed yes" in bar, bar
        await pilot.press("W")
        await pilot.pause()
        assert human(rgb) == {("0", "not_addressed", "*"): False}


def test_every_catalogue_label_is_declared_by_exactly_one_family():
    """A new label (or family) must be declared in its ragreview/families/ module to be
    reviewable."""
    from ragreview.core.families import FAMILIES
    from ragreview.core.labels import CATALOGUE

    owners = [name for family in FAMILIES for name in family.labels()]
    assert sorted(owners) == sorted(CATALOGUE)
    keys = [(u.action, kind) for f in FAMILIES for u in f.keys for kind in u.labels]
    assert len(keys) == len(set(keys))  # one key never means two labels on one item kind
    assert {u.action for f in FAMILIES for u in f.keys} == set(LABEL_KEYS)
