"""Reading the next page of a long read on a thread and a connection of their own.

``agreement`` reads the reviewed records a page at a time and counts each page's
labels in Python. Most of a page's read is SQLite writing its label rows as JSON,
which lets go of the interpreter: read on a second thread while the first counts the
page before, it runs on a second core where there is one, instead of between the
counts (issue 27: ``agreement`` at 10,000 reviewed records).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    import sqlite3

    import sqlite_utils

T = TypeVar("T")


def file_of(db: sqlite_utils.Database) -> str:
    """The file ``db`` is open on; "" for a database in memory (no other connection
    can see it)."""
    return next(file for _, name, file in db.conn.execute("PRAGMA database_list") if name == "main")


class _Pending(Generic[T]):
    """One page's read, given by ``result`` once the thread has done it."""

    __slots__ = ("_done", "_value", "_error")

    def __init__(self) -> None:
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def result(self) -> T:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # (set before _done)


class ReadAhead(Generic[T]):
    """``read(db, page)`` of one page at a time, the next begun while the caller works
    on the one before. Its thread reads through a read-only connection of its own; a
    database in memory, or one ``db`` is amid a transaction on, is read on ``db``
    itself, when the page is asked for. Close it (``with``): that ends the thread and
    closes its connection, also after an early stop.

    (One thread and a queue of pages, not ``concurrent.futures``: that imports
    ``logging``, which nothing else of ``agreement`` needs, 7-17 ms of its start.)"""

    def __init__(
        self, db: sqlite_utils.Database, read: Callable[[sqlite_utils.Database, list[int]], T]
    ) -> None:
        self._db, self._read = db, read
        # (a caller amid a transaction is read on its own connection: another one
        # would not see what it has not committed)
        self._path = "" if db.conn.in_transaction else file_of(db)
        self._pages: SimpleQueue[tuple[list[int], _Pending[T]] | None] = SimpleQueue()
        self._thread: threading.Thread | None = None
        if self._path:
            self._thread = threading.Thread(
                target=self._read_apart, name="ragreview-read", daemon=True
            )
            self._thread.start()

    def start(self, page: list[int]) -> Callable[[], T]:
        """Begin reading ``page``; the returned call waits for what ``read`` gave."""
        if self._thread is None:
            return lambda: self._read(self._db, page)
        pending: _Pending[T] = _Pending()
        self._pages.put((page, pending))
        return pending.result

    def _read_apart(self) -> None:
        """The thread: each page in turn on its own connection, until told to stop."""
        from .database import Database
        from .db import connect_read_only

        own: Database | None = None
        try:
            while (job := self._pages.get()) is not None:
                page, pending = job
                try:
                    if own is None:
                        own = Database(connect_read_only(self._path))
                    pending._value = self._read(own, page)
                except BaseException as error:  # (handed to the caller by result())
                    pending._error = error
                finally:
                    pending._done.set()
        finally:
            if own is not None:
                conn: sqlite3.Connection = own.conn
                conn.close()

    def __enter__(self) -> ReadAhead[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._pages.put(None)  # (after any read still running or queued)
            self._thread.join()
