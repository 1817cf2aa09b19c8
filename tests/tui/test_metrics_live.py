"""The metrics panel follows every keystroke: hand-computed TRACe (ragbench) values."""

from __future__ import annotations

import pytest

from ragreview.tui.widgets.metrics_panel import MetricsPanel

from .conftest import make_app, opened, text_of, write_records

# m-1: T = 4, R = {0a, 0b}, U = {0a}: utilization 1/4, completeness |R∩U|/|R| = 1/2.
# m-2: T = 2, R = U = {0a}: utilization 1/2, completeness 1.
RECORDS = [
    {
        "id": "m-1",
        "task": "trace",
        "question": "q1?",
        "documents": [
            {"sentences": [["0a", "One."], ["0b", "Two."], ["0c", "Three."], ["0d", "Four."]]}
        ],
        "response": [["a", "Answer one."]],
        "labels": {
            "judge": {
                "relevant": {"0a": True, "0b": True},
                "utilized": {"0a": True},
                "supported": {"a": True},
            }
        },
    },
    {
        "id": "m-2",
        "task": "trace",
        "question": "q2?",
        "documents": [{"sentences": [["0a", "Five."], ["0b", "Six."]]}],
        "response": [["a", "Answer two."]],
        "labels": {
            "judge": {"relevant": {"0a": True}, "utilized": {"0a": True}, "supported": {"a": True}}
        },
    },
]


def shown(app, section: str, name: str) -> tuple:
    return app.screen.query_one(MetricsPanel).values[section][name]


async def test_u_moves_utilization_and_completeness_and_undo_restores(tmp_path):
    o = opened(write_records(tmp_path, RECORDS))
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert shown(app, "record", "trace.utilization") == pytest.approx((0.25, 0.25))
        assert shown(app, "record", "trace.completeness") == pytest.approx((0.5, 0.5))
        assert shown(app, "dataset", "trace.utilization") == pytest.approx((0.375, 0.375))
        assert shown(app, "dataset", "trace.completeness") == pytest.approx((0.75, 0.75))

        await pilot.press("j", "u")  # 0b is relevant; now utilized too
        await pilot.pause()
        assert shown(app, "record", "trace.utilization") == pytest.approx((0.25, 0.5))
        assert shown(app, "record", "trace.completeness") == pytest.approx((0.5, 1.0))
        assert shown(app, "record", "trace.relevance") == pytest.approx((0.5, 0.5))
        assert shown(app, "dataset", "trace.utilization") == pytest.approx((0.375, 0.5))
        assert shown(app, "dataset", "trace.completeness") == pytest.approx((0.75, 1.0))
        panel = text_of(app.screen.query_one(MetricsPanel))
        assert "0.250→0.500" in panel and "+0.250" in panel and "0.375→0.500" in panel

        await pilot.press("ctrl+z")
        await pilot.pause()
        assert shown(app, "record", "trace.utilization") == pytest.approx((0.25, 0.25))
        assert shown(app, "record", "trace.completeness") == pytest.approx((0.5, 0.5))
        assert shown(app, "dataset", "trace.utilization") == pytest.approx((0.375, 0.375))
        assert shown(app, "dataset", "trace.completeness") == pytest.approx((0.75, 0.75))


async def test_s_moves_adherence_and_blind_hides_record_judge_values(tmp_path):
    o = opened(write_records(tmp_path, RECORDS))
    app = make_app(o, blind=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert all(
            judge is None
            for judge, _ in app.screen.query_one(MetricsPanel).values["record"].values()
        )
        await pilot.press("b")
        await pilot.pause()
        assert shown(app, "record", "trace.adherence") == pytest.approx((1.0, 1.0))
        await pilot.press("j", "j", "j", "j", "s")  # response sentence a: unsupported
        await pilot.pause()
        assert app.screen.sentences.item.key == "a"
        assert shown(app, "record", "trace.adherence") == pytest.approx((1.0, 0.0))
        assert shown(app, "dataset", "trace.adherence") == pytest.approx((1.0, 0.5))


async def test_d_sorts_the_list_by_largest_metric_change(tmp_path):
    o = opened(write_records(tmp_path, RECORDS))
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lst = app.screen.records
        assert [lst.row(i).id for i in range(len(lst.ids))] == ["m-1", "m-2"]
        await pilot.press("n", "u")  # m-2: 0a no longer utilized -> utilization 0.5 -> 0
        await pilot.pause()
        assert shown(app, "record", "trace.utilization") == pytest.approx((0.5, 0.0))
        await pilot.press("d")
        await pilot.pause()
        assert [lst.row(i).id for i in range(len(lst.ids))] == ["m-2", "m-1"]
        assert "by Δ" in text_of(app.screen.query_one("ReviewHeader"))


async def test_rgb_record_shows_the_dataset_accuracy_it_moves(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("n", "n", "n", "n")
        await pilot.pause()
        assert app.screen.review.stored.id == "rgb-1"
        # one RGB record, judged correct and not rejected: accuracy 1.0
        assert shown(app, "record", "rgb.correct") == pytest.approx((1.0, 1.0))
        assert shown(app, "dataset", "rgb.accuracy") == pytest.approx((1.0, 1.0))
        await pilot.press("x")  # rejected: a rejected record is not correct
        await pilot.pause()
        assert shown(app, "record", "rgb.rejected") == pytest.approx((0.0, 1.0))
        assert shown(app, "record", "rgb.correct") == pytest.approx((1.0, 0.0))
        assert shown(app, "dataset", "rgb.accuracy") == pytest.approx((1.0, 0.0))
        panel = text_of(app.screen.query_one(MetricsPanel))
        assert "accuracy" in panel and "1.000→0.000" in panel
