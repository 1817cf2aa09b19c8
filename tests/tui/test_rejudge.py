"""The palette's re-judge command against a real local OpenAI-compatible server."""

from __future__ import annotations

import asyncio

import pytest

from ragreview.services.judge import JudgeConfig, run
from ragreview.store import judge_store, open_database
from ragreview.tui.screens.prompt import PromptScreen
from ragreview.tui.widgets.metrics_panel import MetricsPanel
from tests.services.judge.helpers import EXPECTED_TRACE, trace_records
from tests.services.judge.judge_server import JudgeServer

from .conftest import make_app, opened, text_of, write_records


@pytest.fixture
def server(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with JudgeServer() as s:
        yield s


def first_run(db_path, dataset: str, config: JudgeConfig) -> None:
    """A whole judge run (it runs its own event loop: kept off the test's)."""
    db = open_database(db_path)
    try:
        run(db, dataset, config)
    finally:
        db.conn.close()


def judged(o, record_id: str) -> dict:
    return next(s.judge for s in o_records(o) if s.id == record_id)


def o_records(o):
    from ragreview.store import records as store_records

    return list(store_records.iterate(o.db, o.dataset))


async def rejudge_via_palette(pilot, model: str | None = None) -> None:
    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*"judge: Re-judge this record")
    await pilot.pause(0.5)
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(pilot.app.screen, PromptScreen)
    if model is not None:
        pilot.app.screen.query_one("#prompt-input").value = model
    await pilot.press("enter")
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def messages(app) -> list[tuple[str, str]]:
    return [(n.message, n.severity) for n in app._notifications]


async def test_rejudge_asks_the_last_runs_model_and_redraws_the_record(server, tmp_path):
    o = opened(write_records(tmp_path, trace_records(3)))
    server.inject("500", match="number 0?", times=100)
    config = JudgeConfig(
        "judge-test", server.base_url, task="trace", max_retries=0, backoff_base=0.01
    )
    await asyncio.to_thread(first_run, o.target.db_path, o.dataset, config)
    assert judged(o, "q0") == {} and judged(o, "q1") == EXPECTED_TRACE
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.rejudge_options = {"max_retries": 0, "backoff_base": 0.01}
        assert screen.review.stored.id == "q0"
        row = screen.sentences.rows[0]
        assert "0a · ·" in text_of(row)
        shown = [" ".join(text_of(w).split()) for w in screen.sentences.query(".judge-error")]
        assert len(shown) == 1
        assert shown[0].startswith("⚠ judge error (judge-test, trace, 20")
        assert shown[0].endswith("): HTTP 500: injected 500")
        calls = server.state.chat_count()

        # the endpoint still fails: the stored error comes back as a notification
        await rejudge_via_palette(pilot)
        assert server.state.chat_count() == calls + 1
        assert messages(app)[-1] == (
            "the judge gave no labels: HTTP 500: injected 500",
            "error",
        )
        assert judged(o, "q0") == {}
        assert len(screen.sentences.query(".judge-error")) == 1  # the latest failure only

        # it answers now: the judge labels land in the DB and on screen
        server.state.rules.clear()
        await pilot.press("J")  # the same command by its key
        await pilot.pause()
        assert app.screen.query_one("#prompt-input").value == "judge-test"  # last run's
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert messages(app)[-1] == ("re-judged with judge-test", "information")
        assert judged(o, "q0") == EXPECTED_TRACE
        assert judge_store.iter_errors(o.db, dataset=o.dataset, unresolved=True) == []
        row = screen.sentences.rows[0]
        assert "0a R U" in text_of(row)
        assert not screen.sentences.query(".judge-error")  # resolved by the new labels
        panel = screen.query_one(MetricsPanel)
        # T = 5 sentences, R = {0a, 1a}, U = {0a}: utilization 1/5, completeness 1/2
        assert panel.values["record"]["trace.utilization"] == pytest.approx((0.2, 0.2))
        assert panel.values["record"]["trace.completeness"] == pytest.approx((0.5, 0.5))

        # a refused key aborts with one line and changes nothing
        server.inject("401", times=10)
        await rejudge_via_palette(pilot, model="other-model")
        message, severity = messages(app)[-1]
        assert severity == "error" and "401" in message and "\n" not in message
        assert judged(o, "q0") == EXPECTED_TRACE
