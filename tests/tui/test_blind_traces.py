"""Blind mode leaves no trace of the judge on screen — the list's ``≠``, deltas, judge
values, its reasoning, the disagreement keys — until the record is marked reviewed."""

from __future__ import annotations

from ragreview.tui.widgets.metrics_panel import MetricsPanel
from ragreview.tui.widgets.verdict_bar import VerdictBar

from .conftest import make_app, text_of
from .test_families import FIXTURES, goto, imported, status

SOURCE = FIXTURES / "handwritten" / "ragbench" / "covidqa_test_rows.jsonl"


def list_rows(app) -> list[str]:
    records = app.screen.records
    return [
        "".join(seg.text for seg in records.render_line(y)).rstrip()
        for y in range(len(records.ids))
    ]


def record_text(app) -> str:
    """Everything the record view shows: verdict bar, text, rows, reasons, panel."""
    widgets = app.screen.query("#record Static, #record ItemRow, VerdictBar, MetricsPanel")
    return "\n".join(text_of(w) for w in widgets if w.display)


def assert_no_judge_trace(app) -> None:
    shown = record_text(app)
    assert "judge ›" not in shown, shown  # the judge's reasoning
    assert "(judge" not in text_of(app.screen.query_one(VerdictBar))
    assert not any(row.has_class("-disagree") for row in app.screen.sentences.rows)
    assert "≠" not in shown
    panel = text_of(app.screen.query_one(MetricsPanel))
    assert "→" not in panel and "+0." not in panel and "-0." not in panel, panel
    assert not any("≠" in row for row in list_rows(app)), list_rows(app)


async def test_blind_mode_hides_every_judge_trace_until_reviewed(tmp_path):
    o = imported(tmp_path, SOURCE)
    app = make_app(o, blind=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.screen.review.stored.id == "covidqa-17"
        await goto(app, pilot, "0c")  # the judge: not relevant
        await pilot.press("r")  # relevant: disagrees with the judge, unseen
        await pilot.pause()
        assert_no_judge_trace(app)
        for key, refused in (("5", "disagreement"), ("right_square_bracket", "next disagreement"),
                             ("d", "sort by metric change")):  # fmt: skip
            await pilot.press(key)
            await pilot.pause()
            assert f"{refused}: not in blind mode" in status(app), key
            assert len(app.screen.records.ids) == 4
        await pilot.press("n")
        await pilot.pause()
        assert_no_judge_trace(app)  # the list row of covidqa-17 too
        await pilot.press("p")
        await pilot.pause()
        assert app.screen.review.stored.id == "covidqa-17" and app.screen.review.hidden
        assert_no_judge_trace(app)

        await pilot.press("space")  # reviewed: now the judge may show
        await pilot.pause()
        assert app.screen.review.stored.id == "covidqa-18"
        assert list_rows(app)[0].startswith("✓ ≠ covidqa-17"), list_rows(app)
        await pilot.press("p")
        await pilot.pause()
        assert app.screen.review.stored.id == "covidqa-17" and not app.screen.review.hidden
        assert "judge › relevant" in record_text(app)
        assert any(row.has_class("-disagree") for row in app.screen.sentences.rows)
