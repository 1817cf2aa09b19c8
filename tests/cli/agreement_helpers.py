"""Shared helpers for the agreement tests: a small native dataset and a CLI runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def trace_record(rid: str, task: str = "trace", relevant=("0a",), supported=None) -> dict:
    return {
        "id": rid,
        "task": task,
        "question": "q?",
        "documents": [{"sentences": [["0a", "one."], ["0b", "two."], ["0c", "three."]]}],
        "response": [["a", "answer one."], ["b", "answer two."]],
        "labels": {
            "judge": {
                "relevant": {k: True for k in relevant},
                "supported": supported or {"a": True, "b": True},
            }
        },
    }


def fact_record(rid: str, facts: dict) -> dict:
    return {
        "id": rid,
        "task": "longform",
        "response": [["a", "text."]],
        "facts": [[k, f"fact {k}", "a"] for k in facts],
        "labels": {"judge": {"fact": facts}},
    }


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def run(*args: str, check: bool = True, real_process: bool = False) -> subprocess.CompletedProcess:
    """The command under test, without CI in the environment: its exit code, stdout and
    stderr. In process through click's CliRunner (an uncaught exception is raised: a
    traceback still fails the test) unless ``real_process``: what these tests check
    (reports, exit codes, messages, the files written) is the same in process, and a
    child Python cost each call 0.5-1.5 s of start-up (numpy, the adapters)."""
    if real_process:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop("CI", None)
        proc = subprocess.run(
            [sys.executable, "-m", "ragreview", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    else:
        from click.testing import CliRunner

        from ragreview.cli import cli

        result = CliRunner().invoke(cli, list(args), env={"CI": None}, catch_exceptions=True)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        proc = subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}: {proc.stderr}")
    return proc


def quick(*args: str) -> str:
    """Run a setup command in-process (click's runner); the commands under test use ``run``."""
    from click.testing import CliRunner

    from ragreview.cli import cli

    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    if result.exit_code != 0:
        raise AssertionError(f"exit {result.exit_code}: {result.output}")
    return result.output
