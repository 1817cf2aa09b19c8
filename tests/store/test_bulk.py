"""Multi-row inserts (``store.bulk``) on a real SQLite file."""

from __future__ import annotations

import sqlite3

import pytest

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


def test_fixed_columns_are_written_into_the_statement_for_every_row(tmp_path):
    conn = table(tmp_path)
    rows = [(i, None if i % 2 else float(i)) for i in range(1, 1200)]  # past one statement
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    bulk.insert(conn, "t", ("k", "b"), rows, fixed={"a": "'judge'", "d": "'it''s'"})
    bulk.insert_present(conn, "t", ("k", "b", "c"), [(2000, None, None)], fixed={"a": "'x'"})
    conn.set_trace_callback(None)
    got = conn.execute("SELECT k, a, b, c, d FROM t ORDER BY k").fetchall()
    assert got == [(k, "judge", b, None, "it's") for k, b in rows] + [(2000, "x", None, None, None)]
    inserts = [s for s in seen if s.startswith("INSERT")]
    assert all("?" not in s.split("VALUES")[0] for s in inserts)
    assert inserts[0].startswith("INSERT INTO t (k, b, a, d) VALUES (1, NULL, 'judge', 'it''s')")


def test_insert_flat_takes_rows_end_to_end(tmp_path):
    conn = table(tmp_path)
    rows = [(i, f"x{i}", None if i % 2 else 0.5, i) for i in range(1, 2500)]  # full + rest
    bulk.insert_flat(conn, "t", ("k", "a", "b", "c"), [v for row in rows for v in row])
    bulk.insert_flat(conn, "t", ("k", "a", "b", "c"), [])
    assert conn.execute("SELECT k, a, b, c FROM t ORDER BY k").fetchall() == rows
    with pytest.raises(ValueError, match="rows of 4"):
        bulk.insert_flat(conn, "t", ("k", "a", "b", "c"), [1, 2, 3])
