"""The first screen reads only the head of the list; the whole list comes from a worker
thread right after (issue 27: nothing proportional to the dataset before the first
record is drawn, and no second-long read on the UI thread after it)."""

from __future__ import annotations

import gc
from collections.abc import Callable

from ragreview.tui.widgets.record_list import HEAD

from ..cli.agreement_helpers import trace_record
from .conftest import at_first_frame, make_app, opened, settled, text_of, write_records


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
        # (the rows below the first screenful mount after the first frame: that layout is
        # not the panel's, so the count starts once they are all in and the growth below
        # has had a second pause; CI under load once counted one reflow here)
        rows = app.screen.sentences.rows
        assert await settled(pilot, lambda: all(row.is_mounted for row in rows))
        box = app.screen.query_one(MetricsBox)
        panel = app.screen.query_one(MetricsPanel)
        assert box.outer_size.height == 3  # border, heading, the headline
        await pilot.press("j", "j", "u")  # utilized 0c: utilization moves in
        await pilot.pause()
        assert box.outer_size.height == 4
        await pilot.pause()
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


def long_record(rid: str, sentences: int = 40) -> dict:
    """A record with more rows than a 80 × 24 screen shows (a RAGBench record has ~44)."""
    keys = [f"0{chr(97 + i % 26)}{i // 26 or ''}" for i in range(sentences)]
    return {
        "id": rid,
        "task": "trace",
        "question": "q?",
        "documents": [{"sentences": [[k, f"sentence {k}."] for k in keys]}],
        "response": [["a", "answer one."], ["b", "answer two."]],
        "labels": {"judge": {"relevant": {keys[0]: True}, "supported": {"a": True}}},
    }


async def test_rows_below_the_first_screen_are_mounted_after_the_first_frame(tmp_path):
    """The first frame styles and measures only the rows that can show on it (issue 27:
    drawing a record's ~44 rows cost more than the app's imports); the rest follows,
    in item order, with every row there once the app is idle."""
    path = write_records(tmp_path, [long_record("long")])
    app = make_app(opened(path))
    mounted = at_first_frame(app, lambda: sum(row.is_mounted for row in app.screen.sentences.rows))
    async with app.run_test(size=(80, 24)) as pilot:
        sentences = app.screen.sentences
        assert await settled(pilot, lambda: all(row.is_mounted for row in sentences.rows))
        assert 0 < mounted[0] < len(sentences.rows) == 42
        shown = [child for child in sentences.children if child in sentences.rows]
        assert shown == sentences.rows  # in item order, below what came first


def in_view(sentences, row) -> bool:
    """Whether ``row`` is laid out and wholly inside the list's view."""
    region, top = row.virtual_region, sentences.scroll_y
    return region.height > 0 and top <= region.y and region.bottom <= top + sentences.size.height


async def test_a_key_before_the_held_back_rows_arrive_reaches_them(tmp_path):
    """End, a cursor move and PageDown right after a record opens (before the rows below
    its first screen are mounted) act on those rows and scroll to them."""
    path = write_records(tmp_path, [long_record("long")])
    app = make_app(opened(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        sentences = screen.sentences
        last = len(sentences.items) - 1

        screen.open_record(screen.review.rowid)  # the rest is held back again
        assert not sentences.rows[-1].is_mounted
        sentences.edge(end=True)
        assert await settled(pilot, lambda: in_view(sentences, sentences.rows[-1]))
        assert sentences.cursor == last and sentences.scroll_y == sentences.max_scroll_y > 0

        screen.open_record(screen.review.rowid)
        sentences.move_to(last - 1)
        assert await settled(pilot, lambda: in_view(sentences, sentences.rows[last - 1]))
        assert sentences.cursor == last - 1 and sentences.rows[last - 1].has_class("-cursor")

        screen.open_record(screen.review.rowid)
        assert await settled(pilot, lambda: sentences.scroll_y == 0)
        screen.open_record(screen.review.rowid)
        sentences.page(1)  # the cursor follows to the first item in view
        assert await settled(pilot, lambda: sentences.cursor > 0 and sentences.scroll_y > 0)
        assert await settled(pilot, lambda: in_view(sentences, sentences.row))
