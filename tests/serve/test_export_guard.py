"""The export guard through ``serve``: a browser session (the TUI, over the websocket)
pressing ctrl+e where its ``<dataset>.reviewed.<ext>`` would land on the database, the
database's WAL or the input file is refused on screen, and the database answers
``metrics`` exactly as before, its input untouched and no temporary file left."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiohttp import ClientSession

from ragreview.store import open_database
from tests.conftest import subprocess_env
from tests.serve.terminal import TerminalSession

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo.jsonl"


def _metrics(tmp_path: Path, args: list[str]) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "ragreview", "metrics", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=subprocess_env(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def _human_labels(db: Path) -> int:
    conn = open_database(db).conn
    try:
        return conn.execute("SELECT count(*) FROM human_labels").fetchone()[0]
    finally:
        conn.close()


# (input file name, serve's arguments after it, the DB, the file ctrl+e would replace)
CASES = {
    # --db named like the export: ctrl+e's demo.reviewed.jsonl is the database itself
    "database": ("demo.jsonl", ["--db", "demo.reviewed.jsonl"], "demo.reviewed.jsonl"),
    # an input whose suffix ends in -wal: the export's name is the database's WAL
    "wal": ("demo.jsonl-wal", ["--db", "demo.reviewed.jsonl"], "demo.reviewed.jsonl"),
    # an input named like the export of its dataset: the export is the input
    "input": ("demo.reviewed.jsonl", ["--dataset", "demo"], "demo.reviewed.ragreview.db"),
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_ctrl_e_through_serve_never_writes_over_the_db_its_wal_or_the_input(
    serve, tmp_path, case
):
    name, args, db_name = CASES[case]
    source = tmp_path / name
    shutil.copy(DEMO, source)
    db = tmp_path / db_name
    served = serve(*args, path=source, db=db)
    target = {"database": db, "wal": Path(f"{db}-wal"), "input": source}[case]
    async with ClientSession() as http:
        session = await TerminalSession.open(http, served.url, "Ann")
        await session.wait_for("covid-1 · trace")
        await session.press("r")  # a label first: the export would have something to lose
        deadline = time.monotonic() + 30
        while not _human_labels(db):
            assert time.monotonic() < deadline, session.text()
            await session.settle(0.1)
        assert target.exists()  # the WAL too: the session holds the database open
        before = _metrics(tmp_path, [name, *args])
        input_bytes = source.read_bytes()

        await session.press("\x05")  # ctrl+e
        await session.wait_for("refus")
        assert "exported" not in session.text()
        await session.socket.close()

    assert _metrics(tmp_path, [name, *args]) == before
    assert source.read_bytes() == input_bytes
    assert db.read_bytes()[:16] == b"SQLite format 3\x00"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
