"""An InspectorRAGet record in a real 80×24 terminal (tmux): the question, every
declared human metric's line and the panel's numbers whole; Home brings the question
back after End."""

from __future__ import annotations

import shutil
import time

import pytest

from .conftest import REPO
from .test_terminal import session, start, tmux, wait_for, wait_still  # noqa: F401  (fixture)
from .test_terminal_families import panel, record_rows

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

SOURCE = REPO / "fixtures" / "inspectorraget" / "clapnq_v1.json"
QUESTION = "Q which method of forecasting uses averages to"
MARKS = [
    QUESTION,
    "annotators · A 46542882 · B 46544861 · C 47200615",
    "▸fluency – · A 4 · B 3 · C 4",
    "of 1 No · 2 Mostly No · 3 Mostly Yes · 4 Yes",  # the file's display_value names
    "The response is coherent, natural, and not dismissive.",  # its description
    " answer_relevance – · A 4 · B 4 · C 4",
    " faithfulness – · A 1 · B 1 · C 4",
    " win-rate – · A 0 · B 100 · C 100",
    "w metric  + higher (from none: lowest)  - lower │",
]
# the annotators' aggregate → the reviewer's (none yet), record and dataset (see
# test_rubric.py for how these follow from the fixture)
NUMBERS = ["4→4", "1→1", "66.667→66.667", "3.926→3.926", "3.264→3.264", "3.818→3.818"]


def test_inspectorraget_record_at_80x24(tmp_path, session):  # noqa: F811
    src = tmp_path / SOURCE.name
    shutil.copy(SOURCE, src)
    start(session, tmp_path, str(src))
    screen = wait_for(session, "reviewed", timeout=60)
    deadline = time.monotonic() + 60  # a loaded machine draws the first screen slowly
    while not all(n in screen for n in MARKS) and time.monotonic() < deadline:
        time.sleep(0.2)
        screen = tmux("capture-pane", "-p", "-t", session)
    header = screen.splitlines()[0]
    assert "[all]" in header and " rubric " in header, screen
    for needle in MARKS:
        assert needle in screen, f"{needle!r} not on screen:\n{screen}"
    # the judged response is on the first screen, above the reference (no key needed)
    assert "a The document does not provide information about" in screen, screen
    assert record_rows(screen) >= 12, screen  # the compact panel leaves the record room
    tmux("send-keys", "-t", session, "M")  # the full panel: every metric
    screen = wait_still(session, "metrics panel: full", timeout=40)
    full_rows = record_rows(screen)
    numbers_shown = panel(screen)
    for needle in NUMBERS:
        assert needle in numbers_shown, f"{needle!r} not in the panel:\n{screen}"
    assert "…" not in numbers_shown, screen
    tmux("send-keys", "-t", session, "M")  # hidden: the record gets the panel's rows
    screen = wait_still(session, "metrics panel: hidden", timeout=40)
    assert record_rows(screen) - full_rows >= 12, screen
    assert "a The document does not provide information about" in screen, screen

    tmux("send-keys", "-t", session, "End")
    deadline = time.monotonic() + 40
    while QUESTION in tmux("capture-pane", "-p", "-t", session):
        assert time.monotonic() < deadline, "End did not scroll the question away"
        time.sleep(0.1)
    tmux("send-keys", "-t", session, "Home")
    wait_for(session, QUESTION, timeout=40)
