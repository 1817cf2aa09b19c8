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


def test_one_command_loads_only_its_own_modules() -> None:
    # start-up of `ragreview label` (issue 27): the command's module and the use cases
    # it calls (services.labels, opening); not the TUI, the judge, the format adapters,
    # the import pipeline or the export, nor the conversion recipes of sqlite-utils
    # (dateutil) or its plugin entry points, nor the other commands of the history
    # (undo, redo, log) or the settings command and its use case
    code = (
        "import sys\n"
        "from ragreview.cli import cli\n"
        "cli.get_command(None, 'label')\n"
        "import sqlite_utils.db\n"
        "heavy = ['textual', 'openai', 'ragreview.formats', 'ragreview.services.importing',\n"
        "         'ragreview.services.import_pipeline', 'ragreview.services.judge',\n"
        "         'ragreview.services.export', 'ragreview.tui', 'ragreview.api', 'dateutil',\n"
        "         'importlib.metadata', 'ragreview.cli.history_cmd', 'ragreview.cli.settings_cmd',\n"
        "         'ragreview.services.settings']\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    assert _run(code) == "[]"


def test_the_lazy_parts_of_sqlite_utils_still_work() -> None:
    code = (
        "import ragreview, sqlite_utils.db as d\n"
        "from sqlite_utils.utils import recipes\n"
        "m = d._virtual_table_using_re.match('CREATE VIRTUAL TABLE t USING fts5(a)')\n"
        "print(m.group('using'), recipes.parsedate('2020-01-02'))"
    )
    assert _run(code) == "fts5 2020-01-02"


def test_every_command_is_listed_and_loads() -> None:
    code = (
        "from ragreview.cli import cli, COMMAND_MODULES\n"
        "names = cli.list_commands(None)\n"
        "print(all(cli.get_command(None, n).name == n for n in names), len(names))"
    )
    assert _run(code) == "True 21"  # (with align and guidelines)
