"""How the schema migrations (``migrations.py``) are registered and run: sqlite-utils'
``Migrations`` built on first use, and a migration's SQL script run statement by
statement inside its transaction. Which migrations a file still needs is read with one
query, without sqlite-utils: every open asks, and almost every file needs none."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlite_utils import Database
    from sqlite_utils.migrations import Migrations


TABLE = "_sqlite_migrations"  # sqlite-utils' ``Migrations.migrations_table``


class Registry:
    """sqlite-utils' ``Migrations`` decorator API, building the real ``Migrations`` on
    first use: the sqlite_utils package imports click, and importing the store must
    not (a test checks it). Register with ``@MIGRATIONS()`` as usual."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._entries: list[tuple[str | None, bool, Callable[[Database], None]]] = []

    def __call__(self, *, name: str | None = None, transactional: bool = True) -> Any:
        def inner(func: Callable[[Database], None]) -> Callable[[Database], None]:
            self._entries.append((name, transactional, func))
            return func

        return inner

    def real(self) -> Migrations:
        from sqlite_utils.migrations import Migrations

        migrations = Migrations(self.name)
        for name, transactional, func in self._entries:
            migrations(name=name, transactional=transactional)(func)
        return migrations

    def pending(self, db: Database) -> list[str]:
        """The names of the migrations not applied to ``db`` yet, in order: what
        sqlite-utils' ``Migrations.pending`` reads (its ``_sqlite_migrations`` table),
        read here in plain SQL so that opening an up-to-date file does not import
        sqlite-utils (issue 27: start-up)."""
        names = [name or func.__name__ for name, _, func in self._entries]
        conn = db.conn
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [TABLE]
        ).fetchone()
        if exists is None:
            return names
        applied = {
            row[0]
            for row in conn.execute(
                f"SELECT name FROM [{TABLE}] WHERE migration_set = ?", [self.name]
            )
        }
        return [name for name in names if name not in applied]

    def apply(self, db: Database, **kwargs: Any) -> None:
        self.real().apply(db, **kwargs)


def run_script(db: Database, sql: str) -> None:
    """``db.executescript(sql)`` inside the migration's transaction. sqlite-utils splits a
    script it runs in a transaction one character at a time, joining the statement so
    far at each one (quadratic: 80 ms of every new database, paid by each import into
    a new file and by hundreds of tests). Here the script is split at each ``;`` that
    ends a complete statement (SQLite decides, so a ``;`` in a string or trigger body
    does not split it): the same statements, run in the same order."""
    statement = ""
    pieces = sql.split(";")
    for i, piece in enumerate(pieces):
        statement += piece if i == len(pieces) - 1 else piece + ";"
        if statement.strip() and sqlite3.complete_statement(statement):
            db.conn.execute(statement)
            statement = ""
    if statement.strip():
        db.conn.execute(statement)
