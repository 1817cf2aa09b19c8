"""sqlite-utils is imported without pandas and numpy (ragreview/_lean_sqlite_utils.py):
they cost every command and the TUI about a second and 85 MB at start, for type mappings
ragreview never uses. Run in fresh interpreters, since this test process imported both."""

import subprocess
import sys


def _run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_commands_start_without_pandas_or_numpy() -> None:
    code = (
        "import sys, ragreview.cli, sqlite_utils.db\n"
        "print('pandas' in sys.modules, 'numpy' in sys.modules)"
    )
    assert _run(code) == "False False"


def test_pandas_still_imports_afterwards_for_the_python_api() -> None:
    code = (
        "import ragreview, sqlite_utils.db, pandas, numpy\n"
        "print(pandas.DataFrame is not None, numpy.ndarray is not None)"
    )
    assert _run(code) == "True True"


def test_a_program_that_imported_pandas_first_keeps_it() -> None:
    code = "import pandas, ragreview, sqlite_utils.db as d\nprint(d.pd is pandas)"
    assert _run(code) == "True"
