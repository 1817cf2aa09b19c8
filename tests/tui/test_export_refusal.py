"""ctrl+e refuses like ``ragreview export`` when the source format cannot hold a label:
a notification naming it, and no file (nor temp file) beside the DB."""

from __future__ import annotations

import shutil

from ragreview.store import history

from .conftest import REPO, make_app, opened

RGB = REPO / "fixtures" / "handwritten" / "rgb"
RGB_REJECT = RGB / "prediction_en_ModelX_temp0.7_noise1.0_passage5_correct0.0.json"


async def test_export_refuses_when_the_source_format_cannot_hold_a_label(tmp_path):
    source = tmp_path / "rgbset.json"
    shutil.copy(RGB_REJECT, source)
    o = opened(source)
    rowid = o.db.conn.execute("SELECT rowid FROM records WHERE id = '2'").fetchone()[0]
    # a rejection holds no answer-part bits (RGB writes label [-1])
    history.set_label(o.db, rowid, "rejected", "*", True, "alice")
    history.set_label(o.db, rowid, "part_matched", "p0", True, "alice")
    app = make_app(o)
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+e")
        await app.workers.wait_for_complete()
        await pilot.pause()
        notes = [n.message for n in app._notifications]
    assert any("cannot hold these reviewed labels: part_matched" in n for n in notes), notes
    assert not any("exported" in n for n in notes), notes
    assert sorted(p.name for p in tmp_path.iterdir() if "reviewed" in p.name) == []
