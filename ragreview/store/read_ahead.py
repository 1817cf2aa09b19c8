"""Reading the next page of a long read on a thread and a connection of their own.

``agreement`` reads the reviewed records a page at a time and counts each page's
labels in Python. Most of a page's read is SQLite writing its label rows as JSON,
which lets go of the interpreter: read on a second thread while the first counts the
page before, it runs on a second core where there is one, instead of between the
counts (issue 27: ``agreement`` at 10,000 reviewed records).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    import sqlite3

    import sqlite_utils

T = TypeVar("T")


def file_of(db: sqlite_utils.Database) -> str:
    """The file ``db`` is open on; "" for a database in memory (no other connection
    can see it)."""
    return next(file for _, name, file in db.conn.execute("PRAGMA database_list") if name == "main")


class ReadAhead(Generic[T]):
    """``read(db, page)`` of one page at a time, the next begun while the caller works
    on the one before. Its thread reads through a read-only connection of its own; a
    database in memory, or one ``db`` is amid a transaction on, is read on ``db``
    itself, when the page is asked for. Close it (``with``): that ends the thread and
    closes its connection, also after an early stop."""

    def __init__(
        self, db: sqlite_utils.Database, read: Callable[[sqlite_utils.Database, list[int]], T]
    ) -> None:
        self._db, self._read = db, read
        # (a caller amid a transaction is read on its own connection: another one
        # would not see what it has not committed)
        self._path = "" if db.conn.in_transaction else file_of(db)
        self._own: sqlite_utils.Database | None = None  # (the thread's, made there)
        self._pool = None
        if self._path:
            from concurrent.futures import ThreadPoolExecutor  # (only a long read needs it)

            self._pool = ThreadPoolExecutor(1, thread_name_prefix="ragreview-read")

    def start(self, page: list[int]) -> Callable[[], T]:
        """Begin reading ``page``; the returned call waits for what ``read`` gave."""
        if self._pool is None:
            return lambda: self._read(self._db, page)
        return self._pool.submit(self._read_apart, page).result

    def _read_apart(self, page: list[int]) -> T:
        if self._own is None:
            from .database import Database
            from .db import connect_read_only

            self._own = Database(connect_read_only(self._path))
        return self._read(self._own, page)

    def _close_own(self) -> None:
        if self._own is not None:
            conn: sqlite3.Connection = self._own.conn
            conn.close()
            self._own = None

    def __enter__(self) -> ReadAhead[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.submit(self._close_own)  # (after any read still running)
            self._pool.shutdown(wait=True)
