"""InspectorRAGet records (the rubric family) in the real app, on both real fixtures:
`w` picks a declared human metric, `+`/`-` step it through its declared values, each
step one label event; the panel shows the annotators' aggregate → the reviewer's value
(numbers computed by hand from the fixture below); every other family's key writes
nothing."""

from __future__ import annotations

import pytest

from ragreview.tui.screens.prompt import PromptScreen
from ragreview.tui.widgets.header import ReviewHeader
from ragreview.tui.widgets.key_bar import KeyBar
from ragreview.tui.widgets.metrics_panel import MetricsPanel
from ragreview.tui.widgets.verdict_bar import VerdictBar

from .conftest import events, human, make_app, text_of
from .test_families import FIXTURES, imported, others, press_refused, record_value, status

RUBRIC_KEYS = ("next-metric", "step-up", "step-down")
FIRST = "ClapNQ::6401197308716204890/gpt"

# The first evaluation of both files (gpt on ClapNQ::6401197308716204890), annotators
# 46542882 (A), 46544861 (B), 47200615 (C):
#   fluency 4 3 4 -> majority 4; faithfulness 1 1 4 -> majority 1 (2 of 3);
#   win-rate 0 100 100 -> average 200/3.
# Over the 400 evaluations (majority "Indeterminate" records left out, as
# InspectorRAGet's majorityAggregator): fluency 1547 / 394, faithfulness 1188 / 364.


def dataset_value(app, name: str) -> tuple[float | None, float | None]:
    return app.screen.query_one(MetricsPanel).values["dataset"][name]


async def press(pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await pilot.pause()


@pytest.mark.parametrize("name", ["clapnq_v1.json", "rag_model_performance_v2.json"])
async def test_rubric_keys(tmp_path, name):
    o = imported(tmp_path, FIXTURES / "inspectorraget" / name)
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert screen.review.stored.id == FIRST
        assert "  rubric " in text_of(screen.query_one(ReviewHeader))
        assert text_of(screen.query_one(KeyBar)).startswith(
            " w metric  + higher (from none: lowest)  - lower │"
        )
        await press_refused(app, pilot, o, others(*RUBRIC_KEYS))
        bar = text_of(screen.query_one(VerdictBar))
        assert "annotators · A 46542882 · B 46544861 · C 47200615" in bar
        # the declared value names (display_value) and the metric's description
        assert "▸fluency – · A 4 · B 3 · C 4" in bar
        assert "of 1 No · 2 Mostly No · 3 Mostly Yes · 4 Yes" in bar
        assert "The response is coherent, natural, and not dismissive." in bar
        assert " faithfulness – · A 1 · B 1 · C 4" in bar
        assert " win-rate – · A 0 · B 100 · C 100" in bar
        # the annotators' reasons, under the record's top, hidden with z
        reasons = text_of(screen.sentences.record_reasons)
        assert "A › faithfulness: Unfaithful to passage" in reasons
        assert "B › faithfulness: Other" in reasons
        assert record_value(app, "rubric.fluency") == (4.0, 4.0)
        assert dataset_value(app, "rubric.fluency") == (1547 / 394, 1547 / 394)
        # automatic metrics: the file's stored scores, one value
        assert record_value(app, "rubric.RougeL") == (0.24000000000000002,) * 2
        assert record_value(app, "rubric.answerability_accuracy") == (0.0, 0.0)

        await press(pilot, "minus")  # fluency from none: the last declared value
        assert human(o) == {(FIRST, "fluency", "*"): "4"}
        await press(pilot, "minus")
        assert human(o) == {(FIRST, "fluency", "*"): "3"}
        assert record_value(app, "rubric.fluency") == (4.0, 3.0)
        assert dataset_value(app, "rubric.fluency") == (1547 / 394, pytest.approx(1546 / 394))
        panel = text_of(screen.query_one(MetricsPanel))
        assert "4→3 -1 " in panel and "3.926→3.924 -0.003" in panel
        assert "▸fluency 3 Mostly Yes · A 4" in text_of(screen.query_one(VerdictBar))
        assert status(app).strip() == "fluency: 3 Mostly Yes"
        await press(pilot, "plus")
        assert human(o)[(FIRST, "fluency", "*")] == "4"
        before = events(o)
        await press(pilot, "plus")  # already 4, the highest: nothing written
        assert events(o) == before
        assert (
            "fluency: already the highest value (1 No · 2 Mostly No · 3 Mostly Yes · 4 Yes)"
            in status(app)
        )

        await press(pilot, "w", "w")  # fluency -> answer_relevance -> faithfulness
        assert "▸faithfulness –" in text_of(screen.query_one(VerdictBar))
        await press(pilot, "plus", "plus")  # none -> 1 -> 2
        assert human(o)[(FIRST, "faithfulness", "*")] == "2"
        assert record_value(app, "rubric.faithfulness") == (1.0, 2.0)
        assert dataset_value(app, "rubric.faithfulness") == (
            1188 / 364,
            pytest.approx(1189 / 364),
        )
        assert "1→2 +1 " in text_of(screen.query_one(MetricsPanel))
        # R: a reason on the active metric's value, kept on its event
        await press(pilot, "R")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"too harsh", "enter")
        await pilot.pause()
        last = o.db.conn.execute(
            "SELECT kind, name, reason FROM events ORDER BY id DESC LIMIT 1"
        ).fetchone()
        assert last == ("reason", "faithfulness", "too harsh")
        # backspace: the active metric back to no value of yours; fluency stays
        await press(pilot, "backspace")
        assert human(o) == {(FIRST, "fluency", "*"): "4"}
        assert record_value(app, "rubric.faithfulness") == (1.0, 1.0)
        await press(pilot, "ctrl+z")  # undo the revert
        assert human(o)[(FIRST, "faithfulness", "*")] == "2"

        await press(pilot, "w")  # win-rate: a number in 0–100, stepped by a tenth
        assert "▸win-rate – · A 0 · B 100 · C 100 · of 0–100" in text_of(
            screen.query_one(VerdictBar)
        )
        await press(pilot, "plus", "plus")  # none -> 0 -> 10
        assert human(o)[(FIRST, "win-rate", "*")] == 10
        assert record_value(app, "rubric.win-rate") == (pytest.approx(200 / 3), 10.0)
        judge, reviewed = dataset_value(app, "rubric.win-rate")
        assert reviewed == pytest.approx(judge + (10 - 200 / 3) / 400)
        assert "66.667→10 -56.667" in text_of(screen.query_one(MetricsPanel))

        kinds = [(e[1], e[2], e[5]) for e in events(o)]
        assert kinds[:4] == [
            ("set", "fluency", '"4"'),
            ("set", "fluency", '"3"'),
            ("set", "fluency", '"4"'),
            ("set", "faithfulness", '"1"'),
        ]
        await press(pilot, "z")  # the annotators' reasons hide like the judge's
        assert "Unfaithful" not in text_of(screen.sentences.record_reasons)
        # the other families' keys still write nothing on this record
        await press_refused(app, pilot, o, others(*RUBRIC_KEYS))


async def test_blind_hides_the_annotators(tmp_path):
    o = imported(tmp_path, FIXTURES / "inspectorraget" / "clapnq_v1.json")
    app = make_app(o, blind=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        bar = text_of(app.screen.query_one(VerdictBar))
        assert "46542882" not in bar and "A 4" not in bar
        assert "▸fluency –" in bar
        assert "Unfaithful" not in text_of(app.screen.sentences.record_reasons)
        assert record_value(app, "rubric.fluency") == (None, 4.0)
        await press(pilot, "minus")
        assert events(o)[-1][7] == "blind"


async def test_a_dataset_without_a_rubric_never_reads_the_annotators(tmp_path):
    """The annotators' per-record aggregates are read for rubric datasets only: on any
    other they would be a read of every record before the first screen (the TUI bench
    saw 1.2 s and 400 MB at 100,000 records)."""
    o = imported(tmp_path, FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl")
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await press(pilot, "j", "j", "f", "z", "z", "b", "b")
        assert app.screen.review.rubric._dataset is None


async def test_help_on_a_rubric_record_lists_no_fact_keys(tmp_path):
    from ragreview.tui.screens.help import HelpScreen

    o = imported(tmp_path, FIXTURES / "inspectorraget" / "clapnq_v1.json")
    app = make_app(o)
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = "\n".join(text_of(s) for s in app.screen.query("Static"))
        assert "label: Next human metric" in shown and "Step human metric up" in shown
        for other in ("Cycle fact label", "Split fact", "Add fact", "Toggle relevant"):
            assert other not in shown, other


async def test_compact_panel_follows_the_active_human_metric(tmp_path):
    o = imported(tmp_path, FIXTURES / "inspectorraget" / "clapnq_v1.json")
    app = make_app(o, panel="compact")  # the app's default
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lines = text_of(app.screen.query_one(MetricsPanel)).splitlines()
        assert len(lines) == 2 and lines[1].split()[0] == "fluency", lines
        await press(pilot, "w")  # the next declared metric
        lines = text_of(app.screen.query_one(MetricsPanel)).splitlines()
        assert len(lines) == 2 and lines[1].split()[0] == "answer_relevance", lines
