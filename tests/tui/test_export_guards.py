"""ctrl+e is the export use case (services.export.export) with its guards, so the TUI,
and ``serve`` which runs it in the browser, never write over the DB, its WAL or the
input: when ``<dataset>.reviewed.<ext>`` leads to one of them, the export is refused
with one notification and the DB answers ``metrics`` exactly as before."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragreview.cli.session import open_target
from ragreview.services import export
from tests.formats.helpers import run

from .conftest import DEMO, make_app


async def _ctrl_e(o) -> list[str]:
    app = make_app(o)
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+e")
        await app.workers.wait_for_complete()
        await pilot.pause()
        return [n.message for n in app._notifications]


def _metrics(db_path: Path) -> tuple[str, str]:
    return run("metrics", db_path).output, run("metrics", db_path, "--json").output


@pytest.mark.parametrize("onto", ["db", "wal", "input"])
async def test_ctrl_e_through_a_link_onto_a_protected_file_is_refused(tmp_path, onto):
    source = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, source)
    o = open_target(str(source))
    db_path = o.target.db_path
    target = {"db": db_path, "wal": Path(f"{db_path}-wal"), "input": source}[onto]
    out = export.reviewed_path(db_path, "demo", ".jsonl")
    out.symlink_to(target)  # what ctrl+e writes leads to the protected file
    text = source.read_bytes()
    before = _metrics(db_path)
    notes = await _ctrl_e(o)
    refusals = [n for n in notes if "refusing to write over" in n]
    assert len(refusals) == 1 and str(out) in refusals[0], notes
    assert "\n" not in refusals[0]
    assert not any(n.startswith("exported") for n in notes), notes
    assert out.is_symlink() and out.readlink() == target
    assert source.read_bytes() == text
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    assert _metrics(db_path) == before and before[1]
    o.db.conn.close()
    assert _metrics(db_path) == before


async def test_ctrl_e_onto_the_input_itself_is_refused(tmp_path):
    """Dataset ``x`` imported from ``x.reviewed.jsonl``: ctrl+e's file is the input."""
    source = tmp_path / "x.reviewed.jsonl"
    shutil.copy(DEMO, source)
    o = open_target(str(source), dataset="x")
    assert export.reviewed_path(o.target.db_path, "x", ".jsonl") == source
    text = source.read_bytes()
    notes = await _ctrl_e(o)
    assert any(f"{source}: refusing to write over" in n for n in notes), notes
    assert source.read_bytes() == text
    o.db.conn.close()
