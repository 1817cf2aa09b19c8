"""Data and helpers shared by the judge tests (fixtures are in conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ragreview.store import open_database
from ragreview.store import records as store_records
from tests.conftest import subprocess_env

SECRET = "sk-ragreview-test-7Qx9SECRETzz41"


def trace_records(n: int) -> list[dict]:
    """n unlabelled TRACe records: documents 0a-0c and 1a-1b, response a and b."""
    return [
        {
            "id": f"q{i}",
            "task": "trace",
            "question": f"Question number {i}?",
            "documents": [
                {"sentences": [["0a", f"Fact one of {i}."], ["0b", "Filler."], ["0c", "More."]]},
                {"sentences": [["1a", f"Second doc about {i}."], ["1b", "Noise."]]},
            ],
            "response": [["a", f"Answer {i} from doc zero."], ["b", "An unsupported claim."]],
        }
        for i in range(n)
    ]


# What the server's oracle answers for every record of trace_records.
EXPECTED_TRACE = {
    "relevant": {"0a": True, "1a": True},
    "utilized": {"0a": True},
    "supported": {"a": True, "b": False},
    "support_keys": {"a": ["0a"], "b": []},
}


def import_into(db, path: Path, dataset: str):
    """Import ``path`` into ``db`` through the library's one import path."""
    from ragreview import formats
    from ragreview.services import importing

    return importing.store(db, formats.open_source(path), dataset, parallel=False)


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def env(**extra: str) -> dict[str, str]:
    """A child environment without our OPENAI_* variables (HOME is tmp: see conftest)."""
    out = {k: v for k, v in subprocess_env().items() if not k.startswith("OPENAI_")}
    out.update(extra)
    return out


def ragreview(
    *args: str, key: str | None = SECRET, real_process: bool = False
) -> subprocess.CompletedProcess:
    """Run the CLI with ``key`` as OPENAI_API_KEY (and no OPENAI_BASE_URL).

    In process through click's CliRunner unless ``real_process``: a child Python pays
    about a second importing the openai package, and what these tests check (exit
    code, stdout, stderr, the real client's requests to the local server, the files
    written) is the same in process. An uncaught exception is raised, so a traceback
    the user would see still fails the test. ``real_process`` runs ``python -m
    ragreview`` for the checks only a real process shows (a traceback on its stderr,
    a run with its own event loop)."""
    if real_process:
        extra = {"OPENAI_API_KEY": key} if key else {}
        return subprocess.run(
            [sys.executable, "-m", "ragreview", *args],
            env=env(**extra),
            capture_output=True,
            text=True,
            timeout=120,
        )
    from click.testing import CliRunner

    from ragreview.cli import cli

    result = CliRunner().invoke(
        cli,
        list(args),
        env={"OPENAI_API_KEY": key, "OPENAI_BASE_URL": None},
        catch_exceptions=True,
    )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def judge_args(path: Path, server, *more: str) -> list[str]:
    return [
        "judge",
        str(path),
        "--model",
        "judge-test",
        "--base-url",
        server.base_url,
        "--task",
        "trace",
        *more,
    ]


def db_layers(db_path: Path) -> dict[str, dict]:
    db = open_database(db_path)
    try:
        return {s.id: s.judge for s in store_records.iterate(db, "trace")}
    finally:
        db.conn.close()
