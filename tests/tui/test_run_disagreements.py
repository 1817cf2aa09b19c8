"""Pilot: items where two judge runs disagree are marked ≈, and `8` filters to them."""

from __future__ import annotations

from ragreview.store import judge_store, run_layers
from ragreview.store import records as store_records
from ragreview.tui.widgets.header import ReviewHeader
from ragreview.tui.widgets.sentence_list import ItemRow

from .conftest import human, make_app, text_of
from .test_review_keys import ids_in_list


def second_run_flipping(o, record_id: str, target: str) -> str:
    """A judge run on one record that says the opposite about one response sentence."""
    stored = store_records.find(o.db, record_id, o.dataset)
    layer = {name: dict(targets) for name, targets in stored.judge.items()}
    layer["supported"][target] = not layer["supported"][target]
    run = judge_store.start_run(o.db, o.dataset, "other-judge", None, "trace")
    names = ("relevant", "utilized", "supported", "support_keys")
    judge_store.save_result(o.db, stored.rowid, run, "trace", names, layer)
    return run


async def test_runs_disagreement_marker_and_filter(demo):
    second_run_flipping(demo, "covid-2", "a")
    (covid2,) = [s for s in store_records.iterate(demo.db, demo.dataset) if s.id == "covid-2"]
    assert run_layers.disagreements(demo.db, covid2.rowid) == {("supported", "a")}
    before = human(demo)
    app = make_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("9")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert ids_in_list(app) == ["covid-2"]
        assert app.screen.review.stored.id == "covid-2"
        assert "runs≈" in text_of(app.screen.query_one(ReviewHeader))
        rows = {row.item.key: row for row in app.screen.query(ItemRow)}
        assert text_of(rows["a"]).strip().startswith("≈ ")
        assert text_of(rows["b"]).strip().startswith("b ")
        await pilot.press("9")  # toggles off
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(ids_in_list(app)) == 5
    assert human(demo) == before
