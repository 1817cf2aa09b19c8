"""Multi-row inserts (``store.bulk``) on a real SQLite file."""

from __future__ import annotations

import sqlite3

from ragreview.store import bulk


def table(tmp_path) -> sqlite3.Connection:
    conn = sqlite3.connect(tmp_path / "b.db")
    conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, a TEXT, b REAL, c INTEGER, d TEXT)")
    return conn


def test_insert_present_leaves_out_only_the_columns_no_row_fills(tmp_path):
    conn = table(tmp_path)
    rows = [(i, f"x{i}", None, i if i % 3 else None, None) for i in range(1, 1200)]
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    bulk.insert_present(conn, "t", ("k", "a", "b", "c", "d"), rows)
    conn.set_trace_callback(None)
    assert conn.execute("SELECT * FROM t ORDER BY k").fetchall() == rows
    inserts = [s for s in seen if s.startswith("INSERT")]
    assert inserts and all(s.startswith("INSERT INTO t (k, a, c) VALUES") for s in inserts)


def test_insert_present_keeps_every_column_some_row_fills(tmp_path):
    conn = table(tmp_path)
    rows = [(1, None, None, None, None), (2, None, 0.5, None, "")]
    bulk.insert_present(conn, "t", ("k", "a", "b", "c", "d"), rows)
    bulk.insert_present(conn, "t", ("k", "a", "b", "c", "d"), [])
    assert conn.execute("SELECT * FROM t ORDER BY k").fetchall() == rows


def test_none_and_bytes_bind_as_null_and_blob(tmp_path):
    conn = table(tmp_path)
    rows = [(1, None, None, None, b"\x00\xffz"), (2, "", None, None, b"")]
    bulk.insert(conn, "t", ("k", "a", "b", "c", "d"), rows)
    conn.executemany("INSERT INTO t (k, d) VALUES (?, ?)", [(3, None), (4, bytes(3))])
    assert conn.execute("SELECT k, typeof(a), typeof(d), d FROM t ORDER BY k").fetchall() == [
        (1, "null", "blob", b"\x00\xffz"),
        (2, "text", "blob", b""),
        (3, "null", "null", None),
        (4, "null", "blob", bytes(3)),
    ]


def test_an_adapter_registered_before_is_kept():
    key = (bytes, sqlite3.PrepareProtocol)
    ours = sqlite3.adapters[key]
    try:
        sqlite3.adapters[key] = theirs = bytes.hex
        bulk._bind_none_and_bytes_directly()
        assert sqlite3.adapters[key] is theirs
    finally:
        sqlite3.adapters[key] = ours
