"""A 10-turn MT-RAG conversation in a real 80×24 terminal (tmux): every list row tells
its record apart, the judged turn's response is on the first screen without a key, and
the panel key gives the record its rows."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from .conftest import REPO
from .test_terminal import session, start, tmux, wait_for, wait_still  # noqa: F401  (fixture)
from .test_terminal_families import record_rows

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SOURCE = REPO / "fixtures" / "mtrag" / "responses-10.jsonl"
CONVERSATION = "dd6b6ffd177f2b311abe676261279d2f"


def ten_turns(tmp_path):
    """The fixture's first task row as a template for a 10-turn conversation answered
    by one model (ids ``<conversation>::<turn>::<model>``); the last turn comes first
    in the file, so the app opens on it."""
    template = json.loads(SOURCE.read_text(encoding="utf-8").splitlines()[0].replace("NaN", "null"))
    rows = []
    for turn in range(1, 11):
        row = dict(template)
        row["task_id"] = f"{CONVERSATION}::{turn}::granite-3"
        row["turn"] = turn
        inputs = []
        for earlier in range(1, turn + 1):
            inputs.append(
                {
                    "speaker": "user",
                    "text": f"question number {earlier} about the Arizona Cardinals stadium",
                }
            )
            if earlier < turn:
                inputs.append(
                    {
                        "speaker": "agent",
                        "text": f"answer {earlier}: " + "they play in Glendale. " * 8,
                    }
                )
        row["input"] = inputs
        row["predictions"] = [
            {"text": f"Judged response of turn {turn}: the Cardinals play at State Farm Stadium."}
        ]
        rows.append(row)
    rows.insert(0, rows.pop())  # turn 10 first
    path = tmp_path / "ten-turns.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def list_rows(screen: str) -> list[str]:
    """The record list's rows (left of the ▕ rule), header and footer left out."""
    lines = screen.splitlines()[1:-2]
    return [
        line.split("▕", 1)[0].strip()
        for line in lines
        if "▕" in line and line.split("▕", 1)[0].strip()
    ]


def test_ten_turn_conversation_at_80x24(tmp_path, session):  # noqa: F811
    src = ten_turns(tmp_path)
    start(session, tmp_path, str(src))
    needle = "Judged response of turn 10"
    screen = wait_for(session, needle, timeout=60)  # on the first screen, no key pressed
    # until the list is drawn and the screen holds still: a capture can land while a
    # frame is half written (seen under load in CI, a stray "▏" beside the metrics)
    deadline = time.monotonic() + 30
    before = None
    while (len(list_rows(screen)) < 10 or screen != before) and time.monotonic() < deadline:
        time.sleep(0.2)
        before, screen = screen, tmux("capture-pane", "-p", "-t", session)
    rows = list_rows(screen)
    assert len(rows) == 10 and len(set(rows)) == 10, screen  # every row distinct
    assert any("t10 granite-3" in row for row in rows), screen  # the turn and the model
    assert any("t3 granite-3" in row for row in rows), screen
    # the earlier turns are folded to one line each, below the judged response
    assert "conversation · 18 earlier turns · o unfolds" in screen, screen
    lines = screen.splitlines()
    response_at = next(i for i, line in enumerate(lines) if needle in line)
    turns_at = next(i for i, line in enumerate(lines) if "earlier turns" in line)
    assert response_at < turns_at, screen
    compact = record_rows(screen)
    assert compact >= 12, screen  # the default (compact) panel leaves the record room

    tmux("send-keys", "-t", session, "M")  # full
    screen = wait_still(session, "metrics panel: full", timeout=40)
    full = record_rows(screen)
    tmux("send-keys", "-t", session, "M")  # hidden
    screen = wait_still(session, "metrics panel: hidden", timeout=40)
    hidden = record_rows(screen)
    assert "▔▔▔▔" not in screen, screen
    assert hidden - full >= 12, (full, hidden, screen)  # the key frees the full panel's rows
    assert hidden == 21, screen  # the whole body: header, status and keys aside

    tmux("send-keys", "-t", session, "o")  # unfold the earlier turns
    screen = wait_for(session, "earlier turns unfolded", timeout=40)
    assert "o folds" in screen, screen
