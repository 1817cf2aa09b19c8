"""A new database is built aside and linked into place (store.db.building), and bulk
inserts go in as multi-row statements (store.bulk), on real SQLite files."""

from __future__ import annotations

import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from ragreview.core.import_items import ImportItem
from ragreview.core.record import parse_record
from ragreview.store import bulk, importer, open_database, preparing
from ragreview.store import records as store_records
from ragreview.store.db import building
from tests.conftest import subprocess_env


def item(position: int, rid: str) -> ImportItem:
    rec = parse_record({"id": rid, "documents": [{"sentences": [["0a", "x"], ["0b", "y"]]}]})
    return ImportItem(position, rec, {"relevant": {"0a": True}})


def leftovers(folder, name: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{name}."))


def test_a_built_database_appears_whole_in_wal_mode(tmp_path) -> None:
    path = tmp_path / "new.ragreview.db"
    with building(path) as db:
        assert not path.exists()  # nobody sees it before it is done
        importer.import_records(db, "ds", "ragreview", None, [item(1, "r1"), item(2, "r2")])
    assert leftovers(tmp_path, path.name) == []
    db = open_database(path)
    assert db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.conn.execute("PRAGMA page_size").fetchone()[0] == 16384
    assert db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert [s.id for s in store_records.iterate(db, "ds")] == ["r1", "r2"]
    assert store_records.find(db, "r1").judge == {"relevant": {"0a": True}}


def test_a_failed_build_leaves_nothing(tmp_path) -> None:
    path = tmp_path / "new.ragreview.db"

    def broken():
        yield item(1, "r1")
        raise RuntimeError("reader failed")

    with pytest.raises(RuntimeError), building(path) as db:
        importer.import_records(db, "ds", "ragreview", None, broken())
    assert not path.exists()
    assert leftovers(tmp_path, path.name) == []


def test_a_database_created_meanwhile_is_kept(tmp_path) -> None:
    path = tmp_path / "new.ragreview.db"
    with pytest.raises(FileExistsError), building(path) as db:
        importer.import_records(db, "ds", "ragreview", None, [item(1, "mine")])
        theirs = open_database(path)  # another process got there first
        importer.import_records(theirs, "ds", "ragreview", None, [item(1, "theirs")])
        theirs.conn.close()
    assert leftovers(tmp_path, path.name) == []
    assert [s.id for s in store_records.iterate(open_database(path), "ds")] == ["theirs"]


BUILDER = textwrap.dedent(
    """
    import sys, time
    from ragreview.store.db import building
    with building(sys.argv[1]) as db:
        print("building", flush=True)
        time.sleep(60)
    """
)


def test_a_killed_build_is_cleaned_up_by_the_next(tmp_path) -> None:
    path = tmp_path / "new.ragreview.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", BUILDER, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        env=subprocess_env(tmp_path),
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "building\n"
        mine = leftovers(tmp_path, path.name)
        assert len(mine) == 1 and mine[0].endswith(".building")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert not path.exists()
    # a build of a process still running (this one) is left alone
    alive = tmp_path / f".{path.name}.{os.getpid()}.0000.building"
    alive.write_bytes(b"")
    with building(path) as db:
        importer.import_records(db, "ds", "ragreview", None, [item(1, "r1")])
    assert leftovers(tmp_path, path.name) == [alive.name]
    assert path.exists()


@pytest.mark.parametrize("count", [0, 1, 1999, 2000, 2001, 7777])
def test_bulk_insert_stores_every_row_in_order(count: int) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (n INTEGER, name TEXT, value REAL, flag TEXT)")
    rows = [(n, f"name-{n}", n / 7, None if n % 3 else "x") for n in range(count)]
    bulk.insert(conn, "t", ("n", "name", "value", "flag"), rows)
    assert conn.execute("SELECT * FROM t ORDER BY rowid").fetchall() == rows


def test_bulk_insert_applies_the_conflict_clause() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER)")
    rows = [(f"k{i % 10}", 1) for i in range(5000)]
    bulk.insert(conn, "t", ("k", "n"), rows, " ON CONFLICT (k) DO UPDATE SET n = n + excluded.n")
    assert conn.execute("SELECT sum(n), count(*) FROM t").fetchone() == (5000, 10)


def test_a_prepared_record_comes_back_as_the_same_item() -> None:
    rec = parse_record(
        {
            "id": "r1",
            "task": "trace",
            "documents": [{"sentences": [["0a", "x"], ["0b", "y"]]}],
            "response": [["a", "A."]],
        }
    )
    original = ImportItem(
        3,
        rec,
        {"relevant": {"0a": True}, "support_keys": {"a": ["0a"]}},
        {"supported": {"a": False}},
        '{"id": "r1"}',
    )
    settings = {"trace.variant": "ragbench", "rgb.variant": "reference", "longform.k": 100}
    prepared = preparing.prepare(original, settings)
    assert prepared.metrics[0]["trace.relevance"] == 0.5
    # (the judge labels cross as one flat tuple: the same rows, in the same order)
    assert list(preparing.label_rows(prepared.judge)) == [
        ("relevant", "0a", "true"),
        ("support_keys", "a", '["0a"]'),
    ]
    # (as an import worker sends it: rebuilt by tuple.__new__, see Prepared.__reduce__)
    sent = pickle.loads(pickle.dumps(prepared, protocol=pickle.HIGHEST_PROTOCOL))
    assert type(sent) is preparing.Prepared
    assert sent == prepared
    assert sent._fields == prepared._fields
    back = preparing.item(sent)
    assert back == original
    assert back.record.data == original.record.data
