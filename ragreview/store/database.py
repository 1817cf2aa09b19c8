"""The handle on an open review database that every store function takes.

The package's own code reads and writes through ``db.conn`` only; sqlite-utils is used
for its migration bookkeeping (``migration_runner``). Importing sqlite-utils costs each
start its plugin system, click and its table parser: about 35 ms, a sixth of what
issue 27 allows one ``ragreview label`` call and a sixth of the first screen's budget.
So ``open_database`` makes this handle over the connection, which imports nothing.

Everything else sqlite-utils' ``Database`` offers (``db["table"]``, ``table_names()``,
``execute()``, ``atomic()``, ...; migrations, tests and Python API users call them) is
passed on to a real one over the same connection, made on first use: the handle
behaves as the sqlite-utils ``Database`` it replaces, and type checkers see it as one.
"""

from __future__ import annotations

import sqlite3
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite_utils

    _Base = sqlite_utils.Database
else:
    _Base = object


class Database(_Base):
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        # what sqlite-utils' Database does to a connection it is given, so a handle
        # made either way runs every statement alike
        conn.execute("PRAGMA recursive_triggers=on;")
        self._full: sqlite_utils.Database | None = None

    def full(self) -> sqlite_utils.Database:
        """The sqlite-utils ``Database`` over this connection (made once, on first use)."""
        if self._full is None:
            import sqlite_utils

            self._full = sqlite_utils.Database(self.conn, execute_plugins=False)
        return self._full

    def __getattr__(self, name: str) -> Any:
        # only called for what the handle does not define itself (not ``conn``)
        if name.startswith("__") or name in ("_full", "conn"):
            raise AttributeError(name)
        return getattr(self.full(), name)

    def __getitem__(self, table_name: str) -> Any:
        return self.full()[table_name]

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Database {self.conn}>"
