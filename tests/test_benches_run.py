"""The bench scripts that share ``agreement_bench.measured`` run end to end at a tiny
size, in temporary folders. Nothing here is timed: a bench is a script nobody runs
until the figures are due, and a changed helper (``measured`` gained the load average)
once broke ``export_bench`` unseen until the final bench of a session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize(
    "script, args",
    [
        ("export_bench.py", ["--records", "40", "--repeat", "1"]),
        ("agreement_bench.py", ["--records", "40", "--reviewed", "8", "--repeat", "1"]),
        ("import_lower_bound.py", ["--records", "20", "--repeat", "1"]),
    ],
)
def test_a_bench_runs_to_its_figures(script: str, args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert "target" in done.stdout
