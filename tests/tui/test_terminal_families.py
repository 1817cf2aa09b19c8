"""One record of each family in a real 80×24 terminal (tmux): the question, every label
mark and the panel's numbers are on screen whole; Home brings the question back."""

from __future__ import annotations

import shutil
import time

import pytest

from .conftest import REPO
from .test_terminal import session, start, tmux, wait_for, wait_still  # noqa: F401  (fixture)

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

FIXTURES = REPO / "fixtures"
SHARED_RGB = REPO.parent / "shared" / "fixtures" / "rgb"

CASES = {
    "trace": (
        FIXTURES / "handwritten" / "ragbench" / "covidqa_test_rows.jsonl",
        ["Q What causes prolonged inflammation in severe", "0a R U Severe COVID-19"],
        ["adherence", "1.000→1.000", "0.600→0.600", "0.750→0.750"],
    ),
    "rgb": (
        SHARED_RGB / "en_fact.json",
        ["Q Super Bowl 2021 location", "rejected – · error –", "p0 ? Tampa"],
        # a data file without predictions: nothing to score, undefined (docs/metrics.md)
        ["correct", "error_detection_rate                 –"],
    ),
    "mtrag": (
        FIXTURES / "mtrag" / "responses-10.jsonl",
        [
            "Q where do the arizona cardinals play this week",
            "idk – · answer UNANSWERABLE · underspec – · rating –",
        ],
        ["275→275", "261.900→261.900", "answerability_accuracy"],
    ),
    "factscore": (
        FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl",
        ["Q Tell me a bio of Lanny Flaherty.", "f1 S  Lanny Flaherty is an American."],
        ["0.269→0.269", "0.623→0.623", "7→7", "19→19", "20.344→20.344"],
    ),
    "ragas": (
        FIXTURES / "ragas" / "annotated_data.json",
        ["Q can you fix this up better?", "verdict yes", "judge › verdict: The response"],
        ["ragas"],
    ),
}


def panel(screen: str) -> str:
    """The metrics panel's lines (below its ▔ rule, right of the list)."""
    lines = screen.splitlines()
    top = next(i for i, line in enumerate(lines) if "▔▔▔▔" in line)
    return "\n".join(line.split("▕", 1)[-1] for line in lines[top + 1 : -2])


def record_rows(screen: str) -> int:
    """Rows of the record view (verdict bar and text) above the metrics panel's rule,
    or down to the status line when the panel is hidden."""
    lines = screen.splitlines()
    top = next((i for i, line in enumerate(lines) if "▔▔▔▔" in line), len(lines) - 2)
    return top - 1  # the header is the first line


@pytest.mark.parametrize("family", list(CASES))
def test_one_record_of_each_family_at_80x24(family, tmp_path, session):  # noqa: F811
    source, marks, numbers = CASES[family]
    if not source.exists():
        pytest.skip(f"{source} is not available")
    src = tmp_path / source.name
    shutil.copy(source, src)
    start(session, tmp_path, str(src))
    screen = wait_for(session, "reviewed", timeout=60)
    deadline = time.monotonic() + 60  # a loaded machine draws the first screen slowly
    while not all(n in screen for n in marks) and time.monotonic() < deadline:
        time.sleep(0.2)
        screen = tmux("capture-pane", "-p", "-t", session)
    for needle in marks:
        assert needle in screen, f"{needle!r} not on screen:\n{screen}"
    tmux("send-keys", "-t", session, "M")  # the full panel: every metric
    screen = wait_still(session, "metrics panel: full", timeout=40)
    numbers_shown = panel(screen)
    for needle in numbers:
        assert needle in numbers_shown, f"{needle!r} not in the panel:\n{screen}"
    assert "…" not in numbers_shown, screen  # no number or metric name cut
    assert "[all]" in screen.splitlines()[0]  # the filter state leads the header


def test_home_brings_the_question_back_after_end(tmp_path, session):  # noqa: F811
    src = tmp_path / "edited_chain_runs.json"
    shutil.copy(FIXTURES / "ragas" / "edited_chain_runs.json", src)
    start(session, tmp_path, str(src))
    question = "Q What is the Theory of Sensory Adaptation"
    wait_for(session, question, timeout=60)
    wait_for(session, "␣ done")  # the footer is drawn once the record is open
    time.sleep(0.5)  # and the first layout has settled (a loaded machine is slow)
    tmux("send-keys", "-t", session, "End")
    deadline = time.monotonic() + 40
    while question in tmux("capture-pane", "-p", "-t", session):
        assert time.monotonic() < deadline, "End did not scroll the question away"
        time.sleep(0.1)
    tmux("send-keys", "-t", session, "Home")
    wait_for(session, question, timeout=40)
