"""Labels that cannot apply are refused with a reason, in the store (every caller) and
on the review screen: RGB's judgements of the output on a record without a prediction.
The file is hand-written in the shape of RGB's data files (their data is not
redistributable)."""

from __future__ import annotations

import pytest

from ragreview.core.errors import RagreviewError
from ragreview.store import history, records

from .conftest import events, human, make_app, opened, write_records
from .test_families import record_value, status

DATA_ROW = {
    "id": 0,
    "query": "Who won the 2022 Nobel Prize in Literature?",
    "answer": ["Annie Ernaux"],
    "positive": ["Annie Ernaux was awarded the 2022 Nobel Prize in Literature."],
    "negative": ["The 2021 prize went to Abdulrazak Gurnah."],
}


def test_store_refuses_output_judgements_without_a_prediction(tmp_path):
    o = opened(write_records(tmp_path, [DATA_ROW], name="rgb_data"))
    rowid = records.find(o.db, "0", o.dataset).rowid
    for name, target in (("rejected", "*"), ("part_matched", "p0")):
        with pytest.raises(RagreviewError, match="no prediction: no output for"):
            history.set_label(o.db, rowid, name, target, True, "alice")
    assert human(o) == {} and events(o) == []


async def test_review_screen_refuses_them_with_the_reason(tmp_path):
    o = opened(write_records(tmp_path, [DATA_ROW], name="rgb_data"))
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in ("x", "s"):
            await pilot.press(key)
            await pilot.pause()
            assert "no prediction: no output for" in status(app), key
        assert human(o) == {} and events(o) == []
        assert record_value(app, "rgb.rejected") == (None, None)  # still undefined
