"""``ragreview open`` in a real terminal (tmux) on a record full of escape sequences:
the screen is not cleared, the title not set, the record list still drawn."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .test_terminal import session, start, tmux, wait_for  # noqa: F401 (session: a fixture)

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

CLEAR = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;pwned-title\x07"


def record(rid: str, text: str) -> dict:
    return {
        "id": rid,
        "task": "trace",
        "question": f"Question {text}here?",
        "documents": [{"title": f"Doc{TITLE}", "sentences": [["0a", f"First {text}fact."]]}],
        "response": [["a", f"Answer {text}end."]],
        "labels": {"judge": {"relevant": {"0a": True}, "supported": {"a": True}}},
    }


def test_escape_sequences_in_a_record_do_not_reach_the_terminal(tmp_path: Path, session):  # noqa: F811
    src = tmp_path / "hostile.jsonl"
    records = [record(f"evil{CLEAR}-1", CLEAR + TITLE), record("calm-2", ""), record("calm-3", "")]
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    start(session, tmp_path, str(src))
    screen = wait_for(session, "0/3 reviewed")
    assert "evil-1" in screen and "calm-2" in screen and "calm-3" in screen
    assert "First fact." in screen and "Answer end." in screen
    tmux("send-keys", "-t", session, "n")  # away and back: the hostile record drawn again
    wait_for(session, "Question here?")
    tmux("send-keys", "-t", session, "p")
    screen = wait_for(session, "First fact.")
    assert "0/3 reviewed" in screen and "calm-2" in screen and "evil-1" in screen
    title = tmux("display-message", "-p", "-t", session, "#{pane_title}")
    assert "pwned" not in title
