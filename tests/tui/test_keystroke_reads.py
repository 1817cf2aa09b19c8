"""One label keystroke reads each thing once: the screen reads what it redraws through
its model (``tui/model.Review.numbers``), not around it. Counted on the real DB
connection with sqlite3's trace callback while the real app handles a real key press."""

from __future__ import annotations

from collections import Counter

from .conftest import human, make_app


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
    assert sum("FROM record_metrics" in s for s in redraw) == 1
    # (measured: 13 statements, one of them the record's guideline rules, where going
    # around the model took 17 without the rules)
    assert len(redraw) <= 13, "\n".join(redraw)
