"""Pilot fixtures: real SQLite files imported from real JSONL, a real app."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from textual.geometry import Region

from ragreview.cli.session import open_target
from ragreview.tui.app import RagreviewApp

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "fixtures" / "demo.jsonl"


def opened(path: Path):
    return open_target(str(path))


@pytest.fixture
def demo(tmp_path: Path):
    """The demo fixture imported into a DB in tmp_path."""
    path = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, path)
    return opened(path)


def write_records(tmp_path: Path, records: Iterable[dict], name: str = "hand") -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def make_app(o, reviewer: str = "alice", blind: bool = False, panel: str = "full") -> RagreviewApp:
    """The app; its metrics panel opens ``full`` (every metric, as the tests of the
    numbers read it) unless ``panel`` says otherwise (the app's default: compact)."""
    app = RagreviewApp(o.db, o.dataset, reviewer, blind=blind, session="test")
    app.panel_mode = panel
    return app


def at_first_frame(app: RagreviewApp, measure: Callable[[], object]) -> list:
    """A list that gets ``measure()`` when ``app`` draws its first frame with the
    record's first row on it (for checks of what runs before that frame)."""
    taken: list = []
    display = app._display

    def first_frame(screen, renderable) -> None:
        display(screen, renderable)
        rows = getattr(app.screen, "sentences", None) and app.screen.sentences.rows
        if renderable is not None and rows and rows[0].is_mounted and not taken:
            taken.append(measure())

    app._display = first_frame  # type: ignore[method-assign]
    return taken


def text_of(widget) -> str:
    """What a widget shows on screen, as plain text lines."""
    width, height = widget.outer_size  # borders included
    strips = widget.render_lines(Region(0, 0, width, height))
    return "\n".join("".join(seg.text for seg in strip).rstrip() for strip in strips)


def human(o, name: str | None = None) -> dict:
    sql = (
        "SELECT r.id, h.name, h.target, h.value FROM human_labels h "
        "JOIN records r ON r.rowid = h.record"
    )
    rows = o.db.conn.execute(sql).fetchall()
    return {(rid, n, t): json.loads(v) for rid, n, t, v in rows if name is None or n == name}


def events(o) -> list[tuple]:
    return o.db.conn.execute(
        "SELECT r.id, e.kind, e.name, e.target, e.old, e.new, e.reviewer, e.pass, e.session "
        "FROM events e JOIN records r ON r.rowid = e.record ORDER BY e.id"
    ).fetchall()


async def settled(pilot, condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Whether ``condition`` holds once the app has done what it started: work it hands
    to a thread or to a later refresh (the list's rest, a scroll) can outlast Pilot's
    idle heuristic, so a test asks for what it waits for instead of one ``pause``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            return False
        await pilot.pause(0.02)
    return True
