"""The import's progress bar moves while a file is parsed, not only once records are
stored (an MT-RAG file whose task_id follows a list is parsed whole before the first
record is yielded: its ids are counted from the parsed rows)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from ragreview import formats
from ragreview.formats.base import ReadContext
from ragreview.store import open_database
from ragreview.store import records as store_records

ROOT = Path(__file__).resolve().parents[2]
MTRAG = ROOT / "fixtures" / "mtrag" / "responses-10.jsonl"


def mtrag_file(path: Path, n: int) -> Path:
    rows = [json.loads(line) for line in MTRAG.read_text().splitlines()]
    with path.open("w") as fh:
        for i in range(n):
            row = rows[i % len(rows)]  # (input first: no id pass, see the docstring)
            fh.write(json.dumps({"input": row["input"], **row, "task_id": f"t{i}"}) + "\n")
    return path


def test_every_byte_is_reported_before_the_first_record_of_a_whole_parse(tmp_path):
    path = mtrag_file(tmp_path / "mt.jsonl", 30)
    seen: list[int] = []
    fmt, stream = formats.read(path, ctx=ReadContext(on_bytes=seen.append))
    assert fmt == "mtrag"
    first = next(stream)
    assert sum(seen) == path.stat().st_size  # the parse before it was reported
    rest = list(stream)
    assert len(rest) + 1 == 30
    seen.clear()
    list(formats.read(path)[1])  # without the context nothing is reported
    assert seen == [] and first.record.id == "t0"


def test_import_on_a_terminal_shows_the_reading_bar_then_stores(tmp_path):
    path = mtrag_file(tmp_path / "mt.jsonl", 40)
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path), "TERM": "xterm"}
    env.pop("CI", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragreview", "import", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    assert proc.wait(timeout=30) == 0
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode(errors="replace"))
    size = f"{path.stat().st_size:,} bytes"
    assert "reading mt.jsonl" in text and size in text and "40 records" in text
    assert "dataset 'mt': 40 new" in text
    db = open_database(tmp_path / "mt.ragreview.db")
    assert store_records.counts(db, "mt") == {"unreviewed": 40}
