"""How the schema migrations (``migrations.py``) are registered and run: sqlite-utils'
``Migrations`` built on first use, and a migration's SQL script run statement by
statement inside its transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlite_utils import Database
    from sqlite_utils.migrations import Migrations


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

    def pending(self, db: Database) -> list[Any]:
        return self.real().pending(db)

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
