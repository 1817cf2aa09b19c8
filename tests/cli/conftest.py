"""Run the CLI both in-process (click's CliRunner) and as a real subprocess."""

from __future__ import annotations

from dataclasses import dataclass

import pytest


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture(params=["cli_runner", "subprocess"])
def ragreview(request, cli_runner, run_cli):
    """``ragreview(*args) -> Result``, once through CliRunner and once for real."""
    if request.param == "subprocess":

        def run(*args):
            proc = run_cli(*args)
            return Result(proc.returncode, proc.stdout, proc.stderr)

        return run

    from ragreview.cli import cli

    def invoke(*args):
        result = cli_runner.invoke(cli, [str(a) for a in args], catch_exceptions=True)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception  # an uncaught exception is a traceback for the user
        return Result(result.exit_code, result.stdout, result.stderr)

    return invoke
