"""A DeepEval test run (fixtures/deepeval/runs, written by DeepEval itself) in the real
app at 80×24: every claim's verdict reachable by scrolling, and every key of the family
(y / N / I on claims, statements, node statements, nodes, expected-output sentences)
writes its label and moves its metric by the amount computed by hand."""

from __future__ import annotations

import pytest

from ragreview.tui.screens.help import HelpScreen
from ragreview.tui.widgets.key_bar import KeyBar
from ragreview.tui.widgets.metrics_panel import MetricsPanel

from .conftest import REPO, human, make_app, text_of
from .test_families import goto, imported, others, press_refused, record_value

RUN = REPO / "fixtures" / "deepeval" / "runs" / "test_run_verdicts.json"
KEYS = ("verdict-yes", "verdict-no", "verdict-idk")


async def test_every_claim_verdict_is_visible_by_scrolling_at_80x24(tmp_path):
    o = imported(tmp_path, RUN)
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.screen.review.stored.id == "capital"
        view = app.screen.sentences
        claims = [r for r in view.rows if r.item.kind == "claim"]
        assert [r.item.key for r in claims] == ["cl1", "cl2", "cl3"]
        glyphs = {"cl1": "✓", "cl2": "✗", "cl3": "~"}  # yes, no, idk (borderline)
        for row in claims:
            await goto(app, pilot, row.item.key)
            assert row.region.height > 0  # on screen
            assert view.region.contains_region(row.region), row.item.key
            shown = text_of(row)
            assert glyphs[row.item.key] in shown.splitlines()[0], shown
        assert "Paris is the most visited city" in text_of(claims[2])
        # the truths are shown with the judge's reasoning
        top = "\n".join(text_of(w) for w in view.children)
        assert "truths from the retrieval" in top and "2.1 million inhabitants" in top
        # a node statement says which node it concerns
        statement = next(r for r in view.rows if r.item.key == "n1s1")
        await goto(app, pilot, "n1s1")
        assert "node 1" in text_of(statement)


async def test_every_deepeval_key_sets_its_verdict_and_moves_its_metric(tmp_path):
    o = imported(tmp_path, RUN)
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await press_refused(app, pilot, o, others(*KEYS))
        # Faithfulness: yes, no, idk -> 2/3 (idk passes unless penalised)
        await goto(app, pilot, "cl1")
        await pilot.press("N")
        await pilot.pause()
        assert human(o)[("capital", "deepeval_claim", "cl1")] == "no"
        assert record_value(app, "deepeval.faithfulness") == (2 / 3, pytest.approx(1 / 3))
        await pilot.press("I")
        await pilot.pause()
        assert human(o)[("capital", "deepeval_claim", "cl1")] == "idk"
        assert record_value(app, "deepeval.faithfulness") == (2 / 3, pytest.approx(2 / 3))
        await pilot.press("y")
        await pilot.pause()
        assert human(o)[("capital", "deepeval_claim", "cl1")] == "yes"
        # Answer Relevancy: yes, idk, no; as3 yes -> 3/3
        await goto(app, pilot, "as3")
        await pilot.press("y")
        await pilot.pause()
        assert record_value(app, "deepeval.answer_relevancy") == (2 / 3, 1.0)
        # Contextual Relevancy: 2 of 4 node statements; n1s1 yes -> 3/4
        await goto(app, pilot, "n1s1")
        await pilot.press("y")
        await pilot.pause()
        assert record_value(app, "deepeval.contextual_relevancy") == (0.5, 0.75)
        before = dict(human(o))
        await pilot.press("I")  # idk is not a contextual verdict (DeepEval's yes / no)
        await pilot.pause()
        assert human(o) == before
        # Contextual Precision on the node rows: yes, no, yes; node 1 yes -> 1.0
        await goto(app, pilot, "1a")
        await pilot.press("y")
        await pilot.pause()
        assert human(o)[("capital", "deepeval_node", "c1")] == "yes"
        assert record_value(app, "deepeval.contextual_precision") == (
            pytest.approx((1 + 2 / 3) / 2),
            1.0,
        )
        # Contextual Recall: yes, no, yes; e1 no -> 1/3
        await goto(app, pilot, "e1")
        await pilot.press("N")
        await pilot.pause()
        assert record_value(app, "deepeval.contextual_recall") == (2 / 3, pytest.approx(1 / 3))
        # a response sentence takes no DeepEval verdict: refused, nothing written
        before = dict(human(o))
        await goto(app, pilot, "a")
        await pilot.press("y")
        await pilot.pause()
        assert human(o) == before
        panel = text_of(app.screen.query_one(MetricsPanel))
        assert "deepeval" in panel
        # the footer names the family's keys, the help explains them
        assert text_of(app.screen.query_one(KeyBar)).startswith(" y yes  N no  I idk │")
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = "\n".join(text_of(w) for w in app.screen.query("Static"))
        for title in ("DeepEval verdict yes", "Verdict no / Neutral", "DeepEval verdict idk"):
            assert title in shown, title
