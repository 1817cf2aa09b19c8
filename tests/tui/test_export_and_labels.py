"""Pilot tests of the follow-ups: source-format export, the newer label keys."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from ragreview.cli import cli
from ragreview.tui.screens.prompt import PromptScreen
from ragreview.tui.widgets.metrics_panel import MetricsBox, MetricsPanel
from ragreview.tui.widgets.verdict_bar import VerdictBar

from .conftest import REPO, human, make_app, opened, settled, text_of, write_records

RGB = REPO / "fixtures" / "handwritten" / "rgb"
RGB_REJECT = RGB / "prediction_en_ModelX_temp0.7_noise1.0_passage5_correct0.0.json"


async def test_export_writes_the_source_format_beside_the_db_like_the_cli(tmp_path):
    source = tmp_path / "rgbset.json"
    shutil.copy(RGB_REJECT, source)
    o = opened(source)
    app = make_app(o)
    notes: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rec = app.screen.review.stored
        judge_rejected = bool(rec.judge.get("rejected", {}).get("*"))
        await pilot.press("x", "ctrl+e")  # flip the rejection verdict, export
        await app.workers.wait_for_complete()
        await pilot.pause()
        notes = [n.message for n in app._notifications]
    out = tmp_path / "rgbset.reviewed.json"  # the source's extension, not .jsonl
    assert out.exists() and not (tmp_path / "rgbset.reviewed.jsonl").exists()
    assert any(str(out) in n and "as rgb" in n for n in notes), notes
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    original = [json.loads(line) for line in source.read_text().splitlines()]
    assert len(rows) == len(original)
    assert "labels" not in rows[0]  # RGB rows, not ragreview JSONL
    assert rows[0] != original[0] and rows[1:] == original[1:]
    assert (rows[0].get("label") == [-1]) is not judge_rejected
    # byte-for-byte what `ragreview export --as source` writes
    cli_out = tmp_path / "cli.json"
    result = CliRunner().invoke(cli, ["export", str(o.target.db_path), "--out", str(cli_out)])
    assert result.exit_code == 0, result.output
    assert cli_out.read_bytes() == out.read_bytes()


RAGAS = {
    "id": "rg-1",
    "task": "ragas",
    "question": "Where is the tower?",
    "documents": [
        {"sentences": [["0a", "The tower is in Paris."], ["0b", "It is tall."]]},
        {"sentences": [["1a", "Lyon has a cathedral."]]},
    ],
    "response": [["a", "In Paris."]],
    "labels": {"judge": {"context_useful": {"c0": True, "c1": False}}},
}
MTRAG = {
    "id": "mt-1",
    "task": "mtrag",
    "question": "Who won?",
    "answerability": "ANSWERABLE",
    "response": [["a", "Nobody knows."]],
    "labels": {"judge": {"idk": {"*": 0}, "underspecified": {"*": 0}, "rb_llm_rating": {"*": 4}}},
}


async def test_c_toggles_the_context_of_the_sentence_and_moves_context_precision(tmp_path):
    o = opened(write_records(tmp_path, [RAGAS]))
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        panel = app.screen.query_one(MetricsPanel)
        assert panel.values["record"]["ragas.context_precision"] == pytest.approx((1.0, 1.0))
        rows = app.screen.sentences.rows
        assert [r.marks[0].value for r in rows[:3]] == [True, True, False]
        assert "0a C" in text_of(rows[0]) and "1a ·" in text_of(rows[2])
        await pilot.press("j", "c")  # cursor on 0b: the whole of context c0
        await pilot.pause()
        assert human(o) == {("rg-1", "context_useful", "c0"): False}
        assert "0a ·" in text_of(rows[0]) and "0b ·" in text_of(rows[1])
        assert rows[0].has_class("-disagree") and rows[1].has_class("-disagree")
        assert panel.values["record"]["ragas.context_precision"] == pytest.approx((1.0, 0.0))
        await pilot.press("j", "c")  # 1a: context c1 becomes useful
        await pilot.pause()
        assert human(o)[("rg-1", "context_useful", "c1")] is True
        # [0, 1]: precision@2 = 1/2 on the only useful context
        assert panel.values["record"]["ragas.context_precision"][1] == pytest.approx(0.5)
        await pilot.press("backspace")  # reverts c1 only
        await pilot.pause()
        assert human(o) == {("rg-1", "context_useful", "c0"): False}
        assert "1a ·" in text_of(rows[2]) and not rows[2].has_class("-overridden")
        await pilot.press("j", "c")  # on a response sentence: refused, nothing written
        await pilot.pause()
        assert human(o) == {("rg-1", "context_useful", "c0"): False}


async def test_shift_u_cycles_underspecified_and_g_sets_the_rating(tmp_path):
    o = opened(write_records(tmp_path, [MTRAG]))
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        bar = app.screen.query_one(VerdictBar)
        panel = app.screen.query_one(MetricsPanel)
        assert "underspec 0" in text_of(bar) and "rating 4" in text_of(bar)
        assert panel.values["record"]["mtrag.rb_llm"] == pytest.approx((0.4, 0.4))
        await pilot.press("U")
        await pilot.pause()
        assert human(o) == {("mt-1", "underspecified", "*"): 0.5}
        assert "underspec 0.5 (judge 0)" in text_of(bar)
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("backspace", "7", "enter")
        await pilot.pause()
        assert human(o)[("mt-1", "rb_llm_rating", "*")] == 7
        assert "rating 7 (judge 4)" in text_of(bar)
        assert panel.values["record"]["mtrag.rb_llm"] == pytest.approx((0.4, 0.7))
        await pilot.press("g", "backspace", "1", "1", "enter")  # out of range: refused
        await pilot.pause()
        assert human(o)[("mt-1", "rb_llm_rating", "*")] == 7
        assert any("1 to 10" in n.message for n in app._notifications)
        await pilot.press("g", "backspace", "enter")  # empty: back to the judge's
        await pilot.pause()
        assert ("mt-1", "rb_llm_rating", "*") not in human(o)
        assert "rating 4" in text_of(bar) and "judge" not in text_of(bar).split("rating")[1]


async def test_metrics_panel_cycles_compact_full_hidden_and_scrolls(tmp_path):
    o = opened(write_records(tmp_path, [MTRAG]))
    app = make_app(o, panel="compact")  # the app's default
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        box = app.screen.query_one(MetricsBox)
        panel = app.screen.query_one(MetricsPanel)
        sentences = app.screen.sentences
        # compact (the default): the family's heading and its headline metric, which
        # the record defines (rb_agg is undefined here, so the first one defined)
        lines = text_of(panel).splitlines()
        assert len(lines) == 2 and lines[1].split()[0] == "answerability_accuracy", lines
        assert box.outer_size.height == 3  # the border, the heading, one metric
        compact_rows = sentences.size.height
        assert compact_rows >= 12
        await pilot.press("M")  # full: every metric, up to two thirds of the screen
        await pilot.pause()
        lines = text_of(panel).splitlines()
        assert len(lines) == len(panel.values["record"]) + 1 > 10
        assert box.outer_size.height == min(len(lines) + 1, 16)
        assert "metrics panel: full" in str(app.screen.query_one("#status").render())
        await pilot.press("M")  # hidden: the record gets the panel's rows
        await pilot.pause()
        assert not box.display and sentences.size.height == compact_rows + 3
        await pilot.press("M")
        await pilot.pause()
        assert box.display and box.outer_size.height == 3
    app = make_app(o)
    async with app.run_test(size=(80, 18)) as pilot:  # full, on a short terminal: it scrolls
        await pilot.pause()
        box = app.screen.query_one(MetricsBox)
        panel = app.screen.query_one(MetricsPanel)
        lines = text_of(panel).splitlines()
        assert box.outer_size.height == 12 and box.scroll_y == 0
        visible = box.scrollable_content_region.height  # the border takes a line
        await pilot.press("right_curly_bracket")
        assert await settled(pilot, lambda: box.scroll_y == 3), box.scroll_y
        await pilot.press(*["right_curly_bracket"] * 3)
        end = len(lines) - visible
        assert await settled(pilot, lambda: box.scroll_y == end), box.scroll_y
        assert box.scroll_y == box.max_scroll_y  # stops at the end
        assert lines[int(box.scroll_y) + visible - 1].split()[0] == "rouge_l"
        await pilot.press(*["left_curly_bracket"] * 4)
        assert await settled(pilot, lambda: box.scroll_y == 0), box.scroll_y


async def test_compact_panel_also_shows_what_a_label_moved(tmp_path, demo):
    """The compact panel's headline (TRACe adherence) does not move when a document
    sentence is marked utilized; the metrics that did move join it, judge → reviewed,
    and the record keeps the screen (the panel stops at its cap and scrolls)."""
    app = make_app(demo, panel="compact")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        panel = app.screen.query_one(MetricsPanel)
        box = app.screen.query_one(MetricsBox)
        assert [line.split()[0] for line in text_of(panel).splitlines()[1:]] == ["adherence"]
        await pilot.press("j", "j", "u")  # utilized 0c: true
        await pilot.pause()
        shown = [line.split()[0] for line in text_of(panel).splitlines()[1:]]
        assert shown[0] == "adherence" and "utilization" in shown, shown
        line = next(x for x in text_of(panel).splitlines() if x.split()[0] == "utilization")
        assert "0.400→0.600" in line and "+0.200" in line, line
        assert box.outer_size.height <= 6 and app.screen.sentences.size.height >= 12
        await pilot.press("backspace")  # reverted: only the headline again
        await pilot.pause()
        assert [line.split()[0] for line in text_of(panel).splitlines()[1:]] == ["adherence"]
