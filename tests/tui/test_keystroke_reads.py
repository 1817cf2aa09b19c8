"""One label keystroke reads each thing once: the screen reads what it redraws through
its model (``tui/model.Review.numbers``), not around it. Counted on the real DB
connection with sqlite3's trace callback while the real app handles a real key press."""

from __future__ import annotations

from collections import Counter

from textual.widgets import Input

from ragreview.store import review_draws
from ragreview.tui.widgets.metrics_panel import MetricsPanel

from .conftest import human, make_app, opened, write_records
from .test_review_queue import trace


async def _statements_of_one_key(demo, key: str) -> list[str]:
    app = make_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        seen: list[str] = []
        demo.db.conn.set_trace_callback(seen.append)
        try:
            await pilot.press(key)
            await pilot.pause()
        finally:
            demo.db.conn.set_trace_callback(None)
    return seen


def _after_the_write(statements: list[str]) -> list[str]:
    """The statements after the label's transaction committed: the redraw's reads
    (inside the transaction the write reads what it recomputes the metrics from)."""
    commits = [i for i, s in enumerate(statements) if s.strip().upper() == "COMMIT"]
    assert commits, statements
    return [s for s in statements[commits[-1] + 1 :] if not s.startswith("PRAGMA data_version")]


async def test_a_label_key_redraws_reading_each_thing_once(demo):
    redraw = _after_the_write(await _statements_of_one_key(demo, "r"))
    assert human(demo) == {("covid-1", "relevant", "0a"): False}  # the key did write
    assert {s: n for s, n in Counter(redraw).items() if n > 1} == {}
    # the reviewed count serves the metrics panel, the estimate and the header (it was
    # read three times per key); the metric rows exist once the review opened, so no
    # redraw asks again; the settings the review read when it opened are used
    assert sum("count(*) FROM records" in s and "'reviewed'" in s for s in redraw) == 1
    assert not [s for s in redraw if "metric_totals WHERE dataset = 'demo' LIMIT 1" in s]
    assert not [s for s in redraw if "name != 'judge.run'" in s]
    assert sum("record_metrics" in s for s in redraw) == 1  # (the record's metric rows)
    # (measured: 13 statements, one of them the record's guideline rules, where going
    # around the model took 17 without the rules)
    assert len(redraw) <= 13, "\n".join(redraw)


async def test_a_label_key_under_a_review_draw_counts_no_records(tmp_path):
    """The corrected estimate checks the draw's population against the dataset's record
    count: the screen counted the records once when it opened, not on every key
    (counting 300,000 records took 20-90 ms per key)."""
    o = opened(write_records(tmp_path, [trace(i) for i in range(12)]))
    app = make_app(o)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("8")
        await pilot.pause()
        app.screen.query_one(Input).value = "impact 6 3"
        await pilot.press("enter")
        await pilot.pause()
        assert review_draws.latest(o.db, o.dataset) is not None
        seen: list[str] = []
        o.db.conn.set_trace_callback(seen.append)
        try:
            await pilot.press("space")  # reviewed: the estimate moves
            await pilot.press("r")
            await pilot.pause()
        finally:
            o.db.conn.set_trace_callback(None)
        estimates = app.screen.query_one(MetricsPanel).values["estimate"]
        assert estimates and "trace.relevance" in estimates
    assert any("review_draw" in s for s in seen)  # the estimate was read from the draw
    counts = [s for s in seen if "count(*) FROM records" in s and "status" not in s]
    assert not counts, counts
