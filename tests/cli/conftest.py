"""Run the CLI in-process (click's CliRunner) and, for the smoke subset, also as a real
subprocess.

A test that takes the ``ragreview`` fixture runs through CliRunner. Marked
``@pytest.mark.cli_smoke`` (exit codes, stderr wording, signals: what only a real
process shows), it runs a second time as ``python -m ragreview``. Every command still
runs for real somewhere; the rest need not pay a process start each.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "ragreview" in metafunc.fixturenames:
        smoke = metafunc.definition.get_closest_marker("cli_smoke") is not None
        ways = ["cli_runner", "subprocess"] if smoke else ["cli_runner"]
        metafunc.parametrize("ragreview", ways, indirect=True)


@pytest.fixture
def ragreview(request, cli_runner, run_cli):
    """``ragreview(*args) -> Result``, through CliRunner (and for real when smoke)."""
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
