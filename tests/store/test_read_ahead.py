"""``store.read_ahead.ReadAhead``: pages read on a thread and connection of their own
give what reading them on the caller's connection gives, in order; a database in
memory is read on its own connection; an early stop or an error ends the thread and
closes its connection."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ragreview.core.one_ahead import one_ahead
from ragreview.store import memory_database, open_database
from ragreview.store.read_ahead import ReadAhead


def read_page(db, page: list[int]) -> list[tuple[int, str, str]]:
    marks = ",".join("?" * len(page))
    return db.conn.execute(
        f"SELECT n, ?, (SELECT file FROM pragma_database_list WHERE name = 'main') "
        f"FROM numbers WHERE n IN ({marks}) ORDER BY n",
        [threading.current_thread().name, *page],
    ).fetchall()


def numbers(db) -> None:
    with db.conn:
        db.conn.execute("CREATE TABLE numbers (n INTEGER PRIMARY KEY)")
        db.conn.executemany("INSERT INTO numbers VALUES (?)", [(n,) for n in range(100)])


def reader_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("ragreview-read")]


def test_pages_are_read_apart_in_order_and_the_thread_ends(tmp_path: Path) -> None:
    db = open_database(tmp_path / "t.db")
    numbers(db)
    pages = [list(range(start, start + 7)) for start in range(0, 100, 7)]
    got = []
    with ReadAhead(db, read_page) as reader:
        pending = [reader.start(page) for page in pages]
        for wait in pending:
            got.append(wait())
    assert [[n for n, _, _ in rows] for rows in got] == [
        [n for n in page if n < 100] for page in pages
    ]
    assert all(name.startswith("ragreview-read") for rows in got for _, name, _ in rows)
    assert not reader_threads()
    db.conn.close()


def test_a_database_in_memory_is_read_on_its_own_connection() -> None:
    db = memory_database()
    numbers(db)
    with ReadAhead(db, read_page) as reader:
        rows = reader.start([1, 2])()
    assert [(n, name) for n, name, _ in rows] == [
        (1, threading.current_thread().name),
        (2, threading.current_thread().name),
    ]


def test_an_early_stop_and_an_error_end_the_thread(tmp_path: Path) -> None:
    db = open_database(tmp_path / "t.db")
    numbers(db)
    with ReadAhead(db, read_page) as reader:
        reader.start([1])  # never waited for
    assert not reader_threads()

    def failing(db, page):
        raise ValueError("no page")

    with pytest.raises(ValueError, match="no page"), ReadAhead(db, failing) as reader:
        reader.start([1])()
    assert not reader_threads()
    db.conn.close()


def test_a_caller_amid_a_transaction_is_read_on_its_own_connection(tmp_path: Path) -> None:
    db = open_database(tmp_path / "t.db")
    numbers(db)
    db.conn.execute("BEGIN")
    db.conn.execute("INSERT INTO numbers VALUES (1000)")  # (not committed)
    with ReadAhead(db, read_page) as reader:
        rows = reader.start([1000])()
    assert [(n, name) for n, name, _ in rows] == [(1000, threading.current_thread().name)]
    db.conn.rollback()
    db.conn.close()


def test_one_ahead_gives_each_item_once_the_next_is_taken() -> None:
    taken: list[int] = []

    def started():
        for n in range(4):
            taken.append(n)
            yield n

    seen = [(n, list(taken)) for n in one_ahead(started())]
    assert seen == [(0, [0, 1]), (1, [0, 1, 2]), (2, [0, 1, 2, 3]), (3, [0, 1, 2, 3])]
    assert list(one_ahead([])) == [] and list(one_ahead([7])) == [7]
