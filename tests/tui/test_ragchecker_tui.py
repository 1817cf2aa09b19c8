"""A RAGChecker result in the real app at 80x24: its claims, each row carrying its claim x
chunk cells as a strip of marks with a column cursor (← →), with every verdict reachable
by scrolling; Y / N / C set the verdict under the cursor and move the record's metrics
(worked out by hand below); every other label key writes nothing. A 40 x 20 result
mounts one row per claim, not per cell."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from textual.widget import Widget
from textual.widgets import Static

from ragreview.store import guidelines
from ragreview.tui.widgets.item_row import ItemRow
from ragreview.tui.widgets.metrics_panel import MetricsPanel

from .conftest import REPO, events, human, make_app, opened, settled, text_of
from .test_families import LABEL_KEYS, others, press_refused, record_value

SOURCE = REPO / "fixtures" / "ragchecker" / "checking_outputs.json"
KEYS = ("set-entailment", "verdict-no", "set-contradiction")
LETTER = {"Entailment": "E", "Neutral": "N", "Contradiction": "C"}


def _opened(tmp_path: Path):
    path = tmp_path / SOURCE.name
    shutil.copy(SOURCE, path)
    return opened(path)


async def _goto(app, pilot, key: str) -> None:
    items = app.screen.sentences.items
    app.screen.sentences.move_to(next(i for i, it in enumerate(items) if it.key == key))
    await pilot.pause()


async def test_every_claim_and_cell_verdict_is_shown_by_scrolling(tmp_path):
    o = _opened(tmp_path)
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        review = app.screen.review
        assert review.stored.id == "0"
        view = app.screen.sentences
        keys = [it.key for it in view.items]
        # each claim, then its four chunks; response claims first, then the ground truth's
        assert keys[:6] == ["s1", "s1/c0", "s1/c1", "s1/c2", "s1/c3", "s2"]
        assert keys.index("r1") == 11 * 5 and keys[keys.index("r22") + 4] == "r22/c3"
        # one row per claim: its cells are marks on it, not rows
        rows = [r.item.key for r in view.rows]
        assert rows[:3] == ["s1", "s2", "s3"] and rows.index("r1") == 11
        assert view.item.key == "s1"  # the cursor starts on the first claim
        # → walks the first claim's cells, ▸ on the strip and the cell spelled out under
        # it; → stops at the last cell, ← goes back to the claim and stops there
        row = view.row
        for column in range(len(row.cells)):
            await pilot.press("right")
            await pilot.pause()
            assert view.item is row.cells[column]
            line = text_of(row)
            assert f"▸c{column}:" in line and f"s1/c{column} " in line, line
        await pilot.press("right", *["left"] * (len(row.cells) + 1))
        await pilot.pause()
        assert view.item is row.item and "▸" not in text_of(row)
        await pilot.press(*["right"] * len(row.cells))
        # j keeps the column: down the grid's last column, every claim's row on screen
        seen: dict[str, str] = {}  # claim -> its row as shown (the claim and its cells)
        for _ in range(len(view.rows)):
            row = view.row
            if row.item.kind == "doc":
                break
            assert row.region.height > 0, row.item.key  # on screen
            assert view.item is row.cells[-1], view.item
            seen[row.item.key] = text_of(row).replace("≠", " ")
            await pilot.press("j")
            await pilot.pause()
        assert view.item.kind == "doc"  # past the claims: the chunks' sentences
        stored = review.stored
        for name in (
            "answer2response",
            "response2answer",
            "retrieved2response",
            "retrieved2answer",
        ):
            for target, value in stored.judge[name].items():
                claim, _, chunk = target.partition("/")
                shown = seen[claim]
                # a claim's verdict after its key; a cell's on the strip, the last
                # column's also spelled out under it
                mark = f"{chunk}:{LETTER[value]}" if chunk else f"{target} {LETTER[value]}"
                assert mark in shown, (target, shown)
                if chunk == "c3":
                    assert f"{target} {LETTER[value]}" in shown, (target, shown)


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
        items = app.screen.sentences.items
        app.screen.sentences.move_to(next(i for i, it in enumerate(items) if it.kind == "doc"))
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


VERDICTS = ("Entailment", "Neutral", "Contradiction")


def _big_result(claims: int, chunks: int) -> dict:
    """A hand-built RAGChecker result of ``claims`` response and ground-truth claims
    against ``chunks`` retrieved chunks (checking_outputs.json's fields)."""
    return {
        "query_id": "big",
        "query": "Which river is the longest?",
        "gt_answer": "The Nile.",
        "response": "The Nile.",
        "retrieved_context": [
            {"doc_id": f"{c:03}", "text": f"[bold red]chunk {c}[/] on rivers."}
            for c in range(chunks)
        ],
        "response_claims": [["Nile", "is", f"claim {i}"] for i in range(claims)],
        "gt_answer_claims": [["Nile", "has", f"fact {i}"] for i in range(claims)],
        "answer2response": [VERDICTS[i % 3] for i in range(claims)],
        "response2answer": [VERDICTS[i % 2] for i in range(claims)],
        "retrieved2response": [
            [VERDICTS[(i + c) % 3] for c in range(chunks)] for i in range(claims)
        ],
        "retrieved2answer": [["Neutral"] * chunks for _ in range(claims)],
    }


async def test_a_40_by_20_result_mounts_a_row_per_claim_not_per_cell(tmp_path):
    claims, chunks = 40, 20
    path = tmp_path / "checking_outputs.json"
    path.write_text(json.dumps({"results": [_big_result(claims, chunks)]}), encoding="utf-8")
    o = opened(path)
    guidelines.store(
        o.db, o.dataset, "- **R1**: a chunk that names another river contradicts.\n", None
    )
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view = app.screen.sentences
        cells = 2 * claims * chunks
        assert len(view.items) > cells  # every cell is still a cursor stop ...
        # ... but the screen mounts one row per claim and per chunk sentence: O(claims +
        # chunks) widgets, not the 1,600 cell rows that took 13 s to the first screen
        # (the rows below the first screenful are mounted after the first frame)
        assert await settled(pilot, lambda: all(row.is_mounted for row in view.rows))
        mounted = len(app.screen.query(ItemRow))
        assert mounted == len(view.rows) <= 2 * claims + chunks + 2, mounted
        assert len(app.screen.query(Widget)) < 4 * (2 * claims + chunks) + 100
        assert view.item.key == "s1" and view.row.region.height > 0  # first screen shown
        # the last ground-truth claim's last cell (→ stops there): C labels that cell
        await _goto(app, pilot, f"r{claims}/c{chunks - 2}")
        await pilot.press("right", "right")
        await pilot.pause()
        assert view.item.key == f"r{claims}/c{chunks - 1}"
        await pilot.press(LABEL_KEYS["set-contradiction"])
        await pilot.pause()
        assert human(o) == {
            ("big", "retrieved2answer", f"r{claims}/c{chunks - 1}"): "Contradiction"
        }
        shown = text_of(view.row)
        assert f"c{chunks - 1}:C" in shown and view.row.has_class("-disagree")
        # the chunk's text is shown literally, never as markup
        assert f"r{claims}/c{chunks - 1} C [bold red]chunk {chunks - 1}[/]" in shown, shown
        # T names the rule the cell's correction applies: spelled out with the cell
        await pilot.press("T")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert "rule R1" in text_of(view.row)
        # ^z takes the rule back, then the label: the strip shows the judge's N again
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert "rule R1" not in text_of(view.row)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert human(o) == {}
        assert f"c{chunks - 1}:N" in text_of(view.row)
        # a click on a cell's mark puts the column cursor there
        lines = text_of(view.row).splitlines()
        y = next(i for i, line in enumerate(lines) if " c5:" in line)
        await pilot.click(view.row, offset=(lines[y].index(" c5:") + 2, y))
        await pilot.pause()
        assert view.item.key == f"r{claims}/c5"
