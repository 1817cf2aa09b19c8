"""The first screen reads only the head of the list; the whole list comes from a worker
thread right after (issue 27: nothing proportional to the dataset before the first
record is drawn, and no second-long read on the UI thread after it)."""

from __future__ import annotations

import gc
from collections.abc import Callable

from ragreview.tui.widgets.record_list import HEAD

from ..cli.agreement_helpers import trace_record
from .conftest import make_app, opened, text_of, write_records


async def test_whole_list_arrives_after_the_head_in_list_order(tmp_path) -> None:
    n = HEAD + 250
    path = write_records(tmp_path, [trace_record(f"r{i:04d}") for i in range(n)])
    o = opened(path)
    app = make_app(o)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        first = screen.records.current
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        in_order = [r for (r,) in o.db.conn.execute("SELECT rowid FROM records ORDER BY position")]
        assert list(screen.records.ids) == in_order and len(in_order) == n
        assert screen.records.current == first == in_order[0]  # still the open record
        # the records past the head are reachable: the last one opens
        screen.open_record(in_order[-1])
        await pilot.pause()
        assert screen.review.stored.id == f"r{n - 1:04d}"
        assert screen.records.neighbour(in_order[-1], -1) == in_order[-2]


async def test_a_filter_loaded_before_the_whole_list_keeps_its_own_rows(tmp_path) -> None:
    n = HEAD + 50
    path = write_records(tmp_path, [trace_record(f"r{i:04d}") for i in range(n)])
    o = opened(path)
    app = make_app(o)
    async with app.run_test(size=(100, 30)) as pilot:
        records = app.screen.records
        head_filter = records.filter
        mine = records.ids[:3]
        records.load(ids=mine)  # what a filter's own load does
        # the whole list of the head's filter, arriving late, is the shown list's only
        # while that filter is; a new filter object since means it is dropped
        records.filter = type(head_filter)(text="x")
        records._took_rest(head_filter, records.ids.__class__("q", range(n)))
        assert list(records.ids) == list(mine)
        await pilot.pause()


async def test_no_collection_before_the_first_screen_and_nothing_frozen_after_the_app(demo):
    """Startup objects are frozen once the first screen is drawn, not collected (a full
    collection cost 60-150 ms on a keypress); the collector is back on after it, and
    everything frozen is collectable again once the app has closed."""
    assert gc.isenabled()
    app = make_app(demo)
    seen: list[bool] = []
    async with app.run_test(size=(100, 30)) as pilot:
        seen.append(gc.isenabled())  # started: the first screen's refresh is still to come
        await pilot.pause()
        await pilot.pause()
        assert gc.isenabled() and gc.get_freeze_count() > 0
        await pilot.press("r")  # keys work with the collector on
        await pilot.pause()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert seen == [False]


def count_reflows(app) -> Callable[[], int]:
    """From now on, how many times the screen has been laid out (re-measuring its rows)."""
    compositor = app.screen._compositor
    reflow = compositor.reflow
    count = 0

    def counted(*args, **kwargs):
        nonlocal count
        count += 1
        return reflow(*args, **kwargs)

    compositor.reflow = counted  # type: ignore[method-assign]
    return lambda: count


async def test_a_key_that_changes_no_height_lays_nothing_out(demo):
    """The status line is one line: its message alone never re-measures the screen (a
    relayout re-measured every sentence row, twice per key)."""
    app = make_app(demo, panel="compact")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.pause()
        reflows = count_reflows(app)
        await pilot.press("j")  # the cursor moves; the status line is cleared
        await pilot.pause()
        app.notify("a message on the one status line")
        await pilot.pause()
        assert reflows() == 0


async def test_a_label_key_redraws_the_record_s_list_line(demo):
    """A label key redraws only its record's line of the list, from the DB: the ``≠``
    of a disagreement comes and goes there."""
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        records = app.screen.records
        line = records.index_of(app.screen.review.rowid)
        assert line == 0

        def shown() -> str:
            return text_of(records).splitlines()[line]

        assert "≠" not in shown()
        await pilot.press("r")  # relevant 0a: the reviewer disagrees with the judge
        await pilot.pause()
        assert "≠" in shown()
        await pilot.press("r")  # back to the judge's value
        await pilot.pause()
        assert "≠" not in shown()


async def test_a_metric_leaving_the_compact_panel_keeps_its_height_until_the_next_record(demo):
    """The compact panel grows when a label moves a metric into it, and keeps that height
    while the reviewer stays on the record: the metric going out again (an undo, the
    same key again) lays nothing out, so the rows beside it do not jump (and the key's
    p99 is not a relayout). The next record starts from its own height."""
    from ragreview.tui.widgets.metrics_panel import MetricsBox, MetricsPanel

    app = make_app(demo, panel="compact")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        box = app.screen.query_one(MetricsBox)
        panel = app.screen.query_one(MetricsPanel)
        assert box.outer_size.height == 3  # border, heading, the headline
        await pilot.press("j", "j", "u")  # utilized 0c: utilization moves in
        await pilot.pause()
        assert box.outer_size.height == 4
        reflows = count_reflows(app)
        await pilot.press("u")  # back to the judge's value: utilization goes out again
        await pilot.pause()
        assert [line.split()[0] for line in text_of(panel).splitlines()[1:]] == ["adherence"]
        assert box.outer_size.height == 4 and reflows() == 0
        await pilot.press("u")  # and in again: no relayout either
        await pilot.pause()
        assert reflows() == 0 and "utilization" in text_of(panel)
        await pilot.press("n")  # the next record: the panel fits what it shows
        await pilot.pause()
        assert box.outer_size.height == 3
