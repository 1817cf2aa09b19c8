"""A RAGBench parquet file whose batches two workers share (services.import_pipeline):
the same entries in the same order, and the same database, as one reader in process,
with real processes, real parquet files and SQLite."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ragreview import formats
from ragreview.core.errors import InputError
from ragreview.formats import parquet
from ragreview.services import import_pipeline
from ragreview.store import preparing
from tests.formats.helpers import run
from tests.formats.test_parquet import RAGBENCH, rows_of, table_of
from tests.services.test_import_pipeline import DEFAULTS, database_rows

BATCHES = 4  # two for each worker, the last one short
BAD = parquet.READ_ROWS + 5  # (0-based) a row of the second batch: the second worker's


def ragbench_rows(n: int, question: str = "") -> list[dict]:
    """``n`` rows cycled from the RAGBench fixture, ids of their own, one invalid."""
    base = rows_of(RAGBENCH)
    out = []
    for i in range(n):
        row = dict(base[i % len(base)], id=f"row-{i}")
        if question:
            row["question"] = f"{question} {i}"
        out.append(row)
    bad = json.loads(json.dumps(out[BAD]))
    bad["sentence_support_information"][0]["response_sentence_key"] = None
    out[BAD] = bad
    return out


def write(path: Path, rows: list[dict]) -> Path:
    pq.write_table(table_of(rows), path, row_group_size=len(rows))
    return path


@pytest.fixture
def shared_file(tmp_path: Path) -> Path:
    n = (BATCHES - 1) * parquet.READ_ROWS + 17
    return write(tmp_path / "rows.parquet", ragbench_rows(n))


def test_two_workers_give_the_entries_one_reader_gives_in_order(shared_file: Path) -> None:
    assert import_pipeline._shares(shared_file, "ragbench") == 2
    read: list[int] = []
    entries = list(import_pipeline.prepared(shared_file, "ragbench", DEFAULTS, read.append))
    _fmt, stream = formats.read(shared_file)
    expected = [
        e if isinstance(e, InputError) else preparing.prepare(e, DEFAULTS, hashed=True)
        for e in stream
    ]
    assert [str(e) if isinstance(e, InputError) else e for e in entries] == [
        str(e) if isinstance(e, InputError) else e for e in expected
    ]
    errors = [e for e in entries if isinstance(e, InputError)]
    assert [e.line for e in errors] == [BAD + 1]  # numbered across both workers' rows
    assert [e.position for e in entries if not isinstance(e, InputError)][-1] == len(entries)
    # prepared with their hashes, and without the source text the compact form gives back
    assert all(e.hashes is not None and e.source is None for e in entries[:3])
    assert sum(read) > 0


def test_a_shared_import_stores_what_an_in_process_import_stores(
    tmp_path: Path, shared_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changed = write(
        tmp_path / "changed.parquet", ragbench_rows(len(rows_of_file(shared_file)), "Q")
    )
    for name in ("here.db", "workers.db"):
        if name == "workers.db":
            monkeypatch.setattr(import_pipeline, "PARALLEL_MIN_BYTES", 0)
        for path in (shared_file, changed):  # the second: every record known and changed
            result = run("import", path, "--db", tmp_path / name, "--dataset", "ds")
            assert result.exit_code == 1 and "1 invalid record was skipped" in result.output
    here, workers = database_rows(tmp_path / "here.db"), database_rows(tmp_path / "workers.db")
    assert len(here["records"]) == len(rows_of_file(shared_file)) - 1
    assert workers == here
    result = run(
        "export",
        tmp_path / "workers.db",
        "--dataset",
        "ds",
        "--as",
        "source",
        "--out",
        tmp_path / "out.jsonl",
    )
    assert result.exit_code == 0, result.output
    exported = rows_of(tmp_path / "out.jsonl")
    assert exported == [row for i, row in enumerate(rows_of_file(changed)) if i != BAD]


def rows_of_file(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def test_a_repeated_id_keeps_one_reader(tmp_path: Path) -> None:
    rows = ragbench_rows(2 * parquet.READ_ROWS + 3)
    rows[-1]["id"] = rows[1]["id"]
    path = write(tmp_path / "repeats.parquet", rows)
    assert import_pipeline._shares(path, "ragbench") == 1
    assert import_pipeline._shares(path, "rgb") == 1  # (only formats read row by row alone)


def test_a_tables_rows_keep_no_line_hash_and_reimport_through_the_workers(
    tmp_path: Path, shared_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parquet row is no line a re-import could skip unparsed: no line hash is kept,
    in process or by the workers, and re-importing the file finds every record
    unchanged by its content hash."""
    for name, min_bytes in (("here.db", 1 << 40), ("workers.db", 0)):
        monkeypatch.setattr(import_pipeline, "PARALLEL_MIN_BYTES", min_bytes)
        for _ in range(2):
            result = run("import", shared_file, "--db", tmp_path / name)
        assert "0 new, 0 changed, 784 unchanged" in result.output
        db = sqlite3.connect(tmp_path / name)
        assert db.execute(
            "SELECT count(*) FROM records WHERE source_hash IS NOT NULL"
        ).fetchone() == (0,)
        db.close()


@pytest.fixture
def large_file(tmp_path: Path) -> Path:
    """More rows than a worker may queue ahead (import_pipeline.AHEAD messages): neither
    worker can have sent all of its own, and exited, while the first are taken."""
    rows = 2 * (import_pipeline.AHEAD * import_pipeline.BATCH + parquet.READ_ROWS)
    return write(tmp_path / "large.parquet", ragbench_rows(rows))


def test_a_sharing_worker_that_is_killed_is_reported(large_file: Path) -> None:
    import multiprocessing
    import os
    import signal

    from ragreview.core.errors import RagreviewError

    stream = import_pipeline.prepared(large_file, "ragbench", DEFAULTS)
    next(stream)
    second = next(p for p in multiprocessing.active_children() if p.name.endswith("-1"))
    os.kill(second.pid, signal.SIGKILL)
    with pytest.raises(RagreviewError, match="the import worker stopped"):
        list(stream)
    assert multiprocessing.active_children() == []


def test_stopping_early_stops_both_workers(large_file: Path) -> None:
    import multiprocessing
    import threading

    before = threading.active_count()
    stream = import_pipeline.prepared(large_file, "ragbench", DEFAULTS)
    next(stream)
    assert len(multiprocessing.active_children()) == 2
    stream.close()
    assert threading.active_count() == before  # both receiving threads are gone
    assert multiprocessing.active_children() == []


def test_the_shared_formats_reader_leaves_each_row_as_it_was() -> None:
    """The sharing workers store a row's compact form unchecked (``prepare(row_text=…)``):
    right only while the format's reader never changes the row it reads. (A format that
    declares ``Traits(rows_stand_alone=True)`` needs its rows checked here.)"""
    from ragreview.formats import ragbench
    from ragreview.formats.catalogue import ADAPTERS

    assert {a.NAME for a in ADAPTERS if a.TRAITS.rows_stand_alone} == {"ragbench"}
    rows = rows_of(RAGBENCH) + ragbench_rows(parquet.READ_ROWS + 6)
    for number, row in enumerate(rows, start=1):
        before = json.loads(json.dumps(row))
        try:
            ragbench.draft(row, number, number, json.dumps(row))
        except Exception:  # noqa: BLE001 (the invalid row: an error, the row as it was)
            pass
        assert row == before
