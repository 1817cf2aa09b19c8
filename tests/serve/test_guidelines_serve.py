"""The guidelines keys through ``serve`` (docs/align.md): a browser session (the TUI,
over the websocket) shows the guidelines with ``H`` and tags a correction with ``T``,
the rule in the database before the row shows it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from aiohttp import ClientSession

from ragreview.store import open_database
from tests.conftest import subprocess_env
from tests.serve.terminal import TerminalSession

GUIDELINES = "# Guidelines\n\n- **R1**: relevant only when it helps answer.\n- **R2**: hedges.\n"


def _rules(db: Path) -> list[tuple]:
    conn = open_database(db).conn
    try:
        return conn.execute(
            "SELECT h.name, h.target, e.rule FROM human_labels h JOIN events e ON e.id = h.event"
        ).fetchall()
    finally:
        conn.close()


async def test_h_and_t_through_serve(serve, tmp_path, demo_copy):
    rules = tmp_path / "guidelines.md"
    rules.write_text(GUIDELINES, encoding="utf-8")
    attached = subprocess.run(
        [sys.executable, "-m", "ragreview", "guidelines", str(demo_copy), str(rules)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=subprocess_env(tmp_path),
    )
    assert attached.returncode == 0, attached.stderr
    served = serve()
    async with ClientSession() as http:
        session = await TerminalSession.open(http, served.url, "Ann")
        await session.wait_for("covid-1 · trace")
        await session.press("H")
        await session.wait_for("rules: R1, R2")
        await session.wait_for("relevant only when it helps answer")
        await session.press("H")  # H again closes it (a lone esc waits for a sequence)
        await session.press("r")  # a correction on 0a
        deadline = time.monotonic() + 30
        while not _rules(served.db):
            assert time.monotonic() < deadline, session.text()
            await session.settle(0.1)
        await session.press("T")
        await session.wait_for("Rule your relevant on 0a applies")
        await session.press("\r")  # enter: the first rule
        await session.wait_for("rule R1")
        assert _rules(served.db) == [("relevant", "0a", "R1")]
        await session.socket.close()
