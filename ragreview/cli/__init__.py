"""The ``ragreview`` command: a thin click layer over the library."""

from __future__ import annotations

import gc
import importlib
import sqlite3
from typing import Any

import click

from .. import __version__

# The module that registers each command. Only the one asked for is imported: loading
# them all (the TUI, the judge, the export, every format adapter) cost each call about
# 0.5 s of start-up, 1,000 s for a script of 2,000 `ragreview label` calls (issue 27).
COMMAND_MODULES = {
    "agreement": "audit",
    "align": "align_cmd",
    "guidelines": "guidelines_cmd",
    "merge": "audit",
    "sample": "audit",
    "conflicts": "audit",
    "import": "data",
    "export": "data",
    "formats": "data",
    "judge": "judge",
    "queue": "queue_cmd",
    "metrics": "metrics",
    "open": "open_cmd",
    "label": "review",
    "mark": "review",
    "undo": "history_cmd",
    "redo": "history_cmd",
    "log": "history_cmd",
    "settings": "settings_cmd",
    "runs": "runs",
    "serve": "serve",
}


class Group(click.Group):
    # True when the group is the process's entry point (the console script, ``python -m
    # ragreview``), not called from a program that goes on (click's CliRunner in tests)
    owns_process = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.owns_process = True
        return super().__call__(*args, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMAND_MODULES) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command, its module imported on first use (it registers on ``cli``)."""
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            importlib.import_module(f"{__name__}.{COMMAND_MODULES[cmd_name]}")
            if self.owns_process:
                # What is imported by now (modules, classes, the family registry) lives
                # until exit: the cyclic collector need not walk it again, at each later
                # collection nor at exit, where that walk was ~6% of a `label` call's
                # CPU (issue 27). Objects made from here on are collected as before.
                gc.freeze()
        return self.commands.get(cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        """A damaged, read-only or full database is one line and exit 1 from every
        command, wherever SQLite notices it (opening, reading a damaged page, a commit)."""
        from ..store.db import explain, is_storage_error
        from .common import DB_KEY

        try:
            return super().invoke(ctx)
        except sqlite3.DatabaseError as err:
            if not is_storage_error(err):
                raise
            path = ctx.meta.get(DB_KEY, "the review database")
            raise click.ClickException(str(explain(err, path))) from None


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ragreview")
def cli() -> None:
    """See and fix the labels behind LLM-judged RAG evaluations.

    PATH is an input file (imported on first use into <stem>.ragreview.db beside it)
    or a .ragreview.db file.
    """
