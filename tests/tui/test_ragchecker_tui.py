"""A RAGChecker result in the real app at 80x24: its claims, each followed by its claim x
chunk cells, with every verdict reachable by scrolling; Y / N / C set the verdict under
the cursor and move the record's metrics (worked out by hand below); every other label
key writes nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Static

from ragreview.tui.widgets.metrics_panel import MetricsPanel

from .conftest import REPO, events, human, make_app, opened, text_of
from .test_families import LABEL_KEYS, others, press_refused, record_value

SOURCE = REPO / "fixtures" / "ragchecker" / "checking_outputs.json"
KEYS = ("set-entailment", "verdict-no", "set-contradiction")
LETTER = {"Entailment": "E", "Neutral": "N", "Contradiction": "C"}


def _opened(tmp_path: Path):
    path = tmp_path / SOURCE.name
    shutil.copy(SOURCE, path)
    return opened(path)


async def _goto(app, pilot, key: str) -> None:
    rows = app.screen.sentences.rows
    app.screen.sentences.move_to(next(i for i, r in enumerate(rows) if r.item.key == key))
    await pilot.pause()


async def test_every_claim_and_cell_verdict_is_shown_by_scrolling(tmp_path):
    o = _opened(tmp_path)
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        review = app.screen.review
        assert review.stored.id == "0"
        rows = app.screen.sentences.rows
        keys = [r.item.key for r in rows]
        # each claim, then its four chunks; response claims first, then the ground truth's
        assert keys[:6] == ["s1", "s1/c0", "s1/c1", "s1/c2", "s1/c3", "s2"]
        assert keys.index("r1") == 11 * 5 and keys[keys.index("r22") + 4] == "r22/c3"
        assert app.screen.sentences.item.key == "s1"  # the cursor starts on the first claim
        seen: dict[str, str] = {}
        for _ in range(len(rows) - 1):
            row = rows[app.screen.sentences.cursor]
            region = row.region
            assert region.height > 0, row.item.key  # on screen
            line = text_of(row)
            seen[row.item.key] = line
            await pilot.press("j")
            await pilot.pause()
            if row.item.kind == "doc":
                break
        stored = review.stored
        for name in (
            "answer2response",
            "response2answer",
            "retrieved2response",
            "retrieved2answer",
        ):
            for target, value in stored.judge[name].items():
                assert target in seen, target
                shown = seen[target]
                assert f"{target} {LETTER[value]}" in shown.replace("≠", " ").strip(), (
                    target,
                    shown,
                )


async def test_every_key_of_the_family(tmp_path):
    o = _opened(tmp_path)
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await press_refused(app, pilot, o, others(*KEYS))
        # s11: judged Contradiction, entailed by no chunk. Entailment: precision 8/11 -> 9/11
        await _goto(app, pilot, "s11")
        assert record_value(app, "ragchecker.precision") == pytest.approx((8 / 11, 8 / 11))
        await pilot.press(LABEL_KEYS["set-entailment"])
        await pilot.pause()
        assert human(o) == {("0", "answer2response", "s11"): "Entailment"}
        assert record_value(app, "ragchecker.precision")[1] == pytest.approx(9 / 11)
        assert record_value(app, "ragchecker.hallucination")[1] == 0.0
        # s11 against c2 (an irrelevant chunk): Contradiction keeps it unfaithful ...
        await _goto(app, pilot, "s11/c2")
        await pilot.press(LABEL_KEYS["set-contradiction"])
        await pilot.pause()
        assert human(o)[("0", "retrieved2response", "s11/c2")] == "Contradiction"
        assert record_value(app, "ragchecker.faithfulness") == pytest.approx((4 / 11, 4 / 11))
        # ... Entailment makes it faithful: 4/11 -> 5/11
        await pilot.press(LABEL_KEYS["set-entailment"])
        await pilot.pause()
        assert record_value(app, "ragchecker.faithfulness")[1] == pytest.approx(5 / 11)
        # r1 (ground truth, entailed by the response): Neutral, recall 11/22 -> 10/22
        await _goto(app, pilot, "r1")
        await pilot.press(LABEL_KEYS["verdict-no"])
        await pilot.pause()
        assert human(o)[("0", "response2answer", "r1")] == "Neutral"
        assert record_value(app, "ragchecker.recall")[1] == pytest.approx(10 / 22)
        # r8/c2: c2 now entails a ground-truth claim, claim recall 5/22 -> 6/22
        await _goto(app, pilot, "r8/c2")
        await pilot.press(LABEL_KEYS["set-entailment"])
        await pilot.pause()
        assert human(o)[("0", "retrieved2answer", "r8/c2")] == "Entailment"
        assert record_value(app, "ragchecker.claim_recall")[1] == pytest.approx(6 / 22)
        panel = text_of(app.screen.query_one(MetricsPanel))
        assert "claim_recall 0.227→0.273" in panel
        # on a document sentence the keys do nothing and say where they apply
        before = events(o)
        rows = app.screen.sentences.rows
        app.screen.sentences.move_to(next(i for i, r in enumerate(rows) if r.item.kind == "doc"))
        await pilot.press(LABEL_KEYS["verdict-no"])
        await pilot.pause()
        assert events(o) == before
        # the footer names the family's keys
        footer = text_of(app.screen.query_one("#keys"))
        assert "Y entailed" in footer and "N neutral" in footer and "C contradicted" in footer
        # and ? lists them first, with what they do
        await pilot.press("question_mark")
        await pilot.pause()
        shown = "\n".join(text_of(w) for w in app.screen.query(Static))
        assert "Keys on this record (ragchecker)" in shown
        assert "label: Set Entailment" in shown and "label: Set Contradiction" in shown
        assert "RAGChecker" in shown and "retrieved2answer" in shown
