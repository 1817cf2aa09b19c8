"""Fixtures shared by all tests: paths, and running the CLI in-process or for real.

The CLI runs in a subprocess with ``sys.executable -m ragreview`` and a PYTHONPATH that
puts this checkout first, so tests exercise this tree (not whatever is installed), and
with HOME pointed into tmp so nothing touches the real home directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def subprocess_env(home: Path | None = None, **extra: str) -> dict[str, str]:
    """An environment for a child Python that imports ragreview from this checkout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("PYTHONSTARTUP", None)
    if home is not None:
        env["HOME"] = str(home)
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return REPO_ROOT / "fixtures"


@pytest.fixture(scope="session")
def demo_path(fixtures_dir: Path) -> Path:
    """The hand-written native demo file (read-only: copy it before importing)."""
    return fixtures_dir / "demo.jsonl"


@pytest.fixture
def demo_copy(tmp_path: Path, demo_path: Path) -> Path:
    """A private copy of the demo file, so its default DB lands in tmp_path."""
    dest = tmp_path / "demo.jsonl"
    dest.write_bytes(demo_path.read_bytes())
    return dest


@pytest.fixture
def run_cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``python -m ragreview ARGS`` for real; returns the CompletedProcess."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)

    def run(*args: str | os.PathLike[str], input: str | None = None, timeout: float = 60, **env):
        return subprocess.run(
            [sys.executable, "-m", "ragreview", *map(str, args)],
            capture_output=True,
            text=True,
            input=input,
            timeout=timeout,
            cwd=tmp_path,
            env=subprocess_env(home, USER="tester", **env),
        )

    return run


def in_process(args: tuple | list, cwd: Path, **env: str | None):
    """Run ``ragreview ARGS`` through click's CliRunner in ``cwd``, with HOME=cwd, CI
    unset and ``env``; the click Result. An uncaught exception is raised (for the user
    it would be a traceback)."""
    from click.testing import CliRunner

    from ragreview.cli import cli

    before = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(
            cli,
            [str(a) for a in args],
            env={"HOME": str(cwd), "CI": None, **env},
            catch_exceptions=True,
        )
    finally:
        os.chdir(before)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


@pytest.fixture
def cli_runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A click ``CliRunner`` with a fixed reviewer name and HOME inside tmp_path."""
    from click.testing import CliRunner

    monkeypatch.setenv("USER", "tester")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return CliRunner()


def pytest_configure(config: pytest.Config) -> None:
    """Textual's Pilot waits, after each key and each ``pause()``, until the process is
    idle: it sleeps 20 ms slices until one used under 1/20 of its length in CPU. Most
    of a TUI test's time was these slices (3.0 of 3.0 s for 20 refused keys on the
    rubric screen), not the work they wait for. Slices of 5 ms keep the same test
    (the same 1/20 ratio of CPU to wall clock, after the same wait for every widget's
    queued messages) and stop waiting 15 ms sooner each time (1.7 s for those keys;
    tests/tui/test_families.py with test_rubric.py: 82 s -> 47 s of test calls)."""
    from textual import _wait

    _wait.SLEEP_GRANULARITY = 1 / 200
    _wait.SLEEP_IDLE = _wait.SLEEP_GRANULARITY / 20
