"""The review queue in the TUI (``8``): draw, list the draw in draw order, and the
corrected estimate and stopping rule following every review (docs/estimate.md)."""

from __future__ import annotations

from textual.widgets import Input

from ragreview.store import metric_writes, review_draws
from ragreview.tui.widgets.header import ReviewHeader
from ragreview.tui.widgets.metrics_panel import MetricsPanel
from ragreview.tui.widgets.record_list import RecordList

from .conftest import make_app, opened, write_records


def trace(i: int) -> dict:
    relevant = {"0a": True, "0b": i % 2 == 0}
    return {
        "id": f"r{i}",
        "task": "trace",
        "question": f"q{i}?",
        "documents": [{"sentences": [["0a", "One."], ["0b", "Two."]]}],
        "response": [["a", "Answer."]],
        "labels": {"judge": {"relevant": relevant, "utilized": {"0a": True},
                             "supported": {"a": i % 3 != 0}}},
    }  # fmt: skip


async def test_queue_key_draws_and_lists_the_draw_in_order(tmp_path):
    o = opened(write_records(tmp_path, [trace(i) for i in range(12)]))
    metric_writes.put_setting(o.db, o.dataset, "estimate.target_halfwidth", 0.05)
    app = make_app(o)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        header = app.screen.query_one(ReviewHeader)
        assert "±0.05" not in header._shown[5]  # no draw yet: no stopping rule
        await pilot.press("8")
        await pilot.pause()
        app.screen.query_one(Input).value = "impact 6 3"
        await pilot.press("enter")
        await pilot.pause()
        drawn = review_draws.latest(o.db, o.dataset)
        assert drawn is not None and (drawn.strategy, drawn.n, drawn.seed) == ("impact", 6, 3)
        records = app.screen.query_one(RecordList)
        assert list(records.ids) == [m.record for m in drawn.members]  # draw order
        assert "queue" in header._shown[5] and "±0.05: no estimate yet" in header._shown[5]
        before = app.screen.query_one(MetricsPanel).values["estimate"]
        assert before and all(v == (None, None) for v in before.values())  # nothing reviewed
        await pilot.press("space", "space", "space")  # reviewed in draw order
        await pilot.pause()
        panel = app.screen.query_one(MetricsPanel).values["estimate"]
        estimate, half = panel["trace.relevance"]
        assert estimate is not None and half is not None
        assert "more" in header._shown[5] or "reached" in header._shown[5]
        # empty input: back to the latest draw, nothing new drawn
        await pilot.press("1")
        await pilot.press("8")
        await pilot.pause()
        app.screen.query_one(Input).value = ""
        await pilot.press("enter")
        await pilot.pause()
        assert review_draws.latest(o.db, o.dataset).id == drawn.id
        assert list(records.ids) == [m.record for m in drawn.members]


async def test_the_draw_s_estimate_comes_right_after_the_first_frame(tmp_path):
    """Opening the review screen reads the latest draw's estimate (its members'
    statuses and values) after the first frame, not before it (issue 27); the panel
    and the header's stopping rule show it once the app is idle."""
    from ragreview.services import queue_draws

    from .conftest import at_first_frame, settled

    o = opened(write_records(tmp_path, [trace(i) for i in range(12)]))
    metric_writes.put_setting(o.db, o.dataset, "estimate.target_halfwidth", 0.05)
    queue_draws.draw(o.db, o.dataset, "impact", 6, 3)
    app = make_app(o)
    statements: list[str] = []
    o.db.conn.set_trace_callback(statements.append)
    read = at_first_frame(app, lambda: len(statements))
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.screen.query_one(MetricsPanel)
        assert await settled(pilot, lambda: bool(panel.values.get("estimate")))
        assert not [s for s in statements[: read[0]] if "review_draw" in s]
        assert [s for s in statements if "review_draw" in s]
        header = app.screen.query_one(ReviewHeader)
        assert "±0.05: no estimate yet" in header._shown[5]
