"""Records prepared by a worker process (services.import_pipeline): the same entries,
the same database, errors and early stops handled, with real processes and SQLite."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from ragreview import formats
from ragreview.core.errors import InputError, RagreviewError
from ragreview.services import import_pipeline
from ragreview.store import importer, metric_writes, open_database, preparing
from ragreview.store import settings as store_settings
from ragreview.store.preparing import Prepared
from tests.formats.helpers import FIXTURES, HANDWRITTEN, run

RAGBENCH = HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl"
FACTSCORE = FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl"
MTRAG = FIXTURES / "mtrag" / "responses-10.jsonl"  # (its sources packed at its family's level)
DEFAULTS = {name: default for name, (default, _) in store_settings.metric_settings().items()}


def with_bad_lines(tmp_path: Path, source: Path) -> Path:
    """The file with an invalid JSON line and an invalid record in the middle."""
    lines = source.read_text(encoding="utf-8").splitlines()
    middle = len(lines) // 2
    bad = ["{not json", json.dumps({"id": "broken", "documents_sentences": 3})]
    path = tmp_path / source.name
    path.write_text("\n".join(lines[:middle] + bad + lines[middle:]) + "\n", encoding="utf-8")
    return path


def in_process(path: Path) -> list[Prepared | InputError]:
    _fmt, stream = formats.read(path)
    return [e if isinstance(e, InputError) else preparing.prepare(e, DEFAULTS) for e in stream]


@pytest.mark.parametrize("source", [RAGBENCH, FACTSCORE])
def test_the_worker_gives_the_entries_read_in_process_gives(tmp_path, source) -> None:
    path = with_bad_lines(tmp_path, source)
    fmt = formats.detect(path)
    read: list[int] = []
    entries = list(import_pipeline.prepared(path, fmt, DEFAULTS, read.append))
    expected = in_process(path)
    assert [str(e) if isinstance(e, InputError) else e for e in entries] == [
        str(e) if isinstance(e, InputError) else e for e in expected
    ]
    assert sum(isinstance(e, InputError) for e in entries) == 2
    # progress covers the file (small files are read as text: characters, near enough)
    assert sum(read) == pytest.approx(path.stat().st_size, rel=0.1)


def test_an_error_the_worker_raises_is_raised_here(tmp_path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id": "a"}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(import_pipeline.prepared(path, "no-such-format", DEFAULTS))
    assert "unknown format 'no-such-format'" in str(caught.value)


def test_stopping_early_stops_the_worker(tmp_path) -> None:
    before = threading.active_count()
    stream = import_pipeline.prepared(RAGBENCH, "ragbench", DEFAULTS)
    first = next(stream)
    assert isinstance(first, Prepared)
    stream.close()
    assert threading.active_count() == before  # the receiving thread is gone
    import multiprocessing

    assert multiprocessing.active_children() == []


def database_rows(db_path: Path) -> dict[str, list[tuple]]:
    db = open_database(db_path)
    tables = {
        "records": "SELECT dataset, id, position, task, data, source, content_hash, status "
        "FROM records ORDER BY rowid",
        "judge_labels": "SELECT r.id, name, target, value FROM judge_labels j "
        "JOIN records r ON r.rowid = j.record ORDER BY r.rowid, name, target",
        "record_metrics": "SELECT r.id, layer, name, value FROM record_metrics m "
        "JOIN records r ON r.rowid = m.record ORDER BY r.rowid, layer, name",
        "metric_totals": "SELECT * FROM metric_totals ORDER BY dataset, layer, name",
        "events": "SELECT record, kind, name, target, new FROM events ORDER BY id",
    }
    rows = {name: db.conn.execute(sql).fetchall() for name, sql in tables.items()}
    db.conn.close()
    return rows


@pytest.mark.parametrize("source", [RAGBENCH, FACTSCORE])
def test_a_worker_import_stores_what_an_in_process_import_stores(
    tmp_path, monkeypatch, source
) -> None:
    path = with_bad_lines(tmp_path, source)
    result = run("import", path, "--db", tmp_path / "here.db")
    assert result.exit_code == 1 and "2 invalid records were skipped" in result.output
    monkeypatch.setattr(import_pipeline, "PARALLEL_MIN_BYTES", 0)
    result = run("import", path, "--db", tmp_path / "worker.db")
    assert result.exit_code == 1 and "2 invalid records were skipped" in result.output
    here, worker = database_rows(tmp_path / "here.db"), database_rows(tmp_path / "worker.db")
    assert here["records"] and here["record_metrics"]
    assert worker == here


def test_records_prepared_under_other_settings_get_their_metrics_recomputed(tmp_path) -> None:
    """A variant changed between reading the settings and storing (another process):
    the prepared metrics are not trusted, and the stored ones follow the settings."""
    prepared = [e for e in in_process(RAGBENCH) if isinstance(e, Prepared)]

    def imported(name: str, variant: str, entries: list, prepared_with=None) -> dict:
        db = open_database(tmp_path / name)
        metric_writes.put_setting(db, "ds", "trace.variant", variant)
        importer.import_records(db, "ds", "ragbench", None, entries, prepared_with=prepared_with)
        db.conn.close()
        rows = database_rows(tmp_path / name)
        return {k: rows[k] for k in ("record_metrics", "metric_totals")}

    _fmt, stream = formats.read(RAGBENCH)
    items = list(stream)
    under_length = imported("length.db", "length", items)
    assert imported("defaults.db", "ragbench", items) != under_length  # the variant matters
    assert imported("worker.db", "length", prepared, prepared_with=DEFAULTS) == under_length


def test_a_worker_that_dies_is_reported(tmp_path) -> None:
    # a directory cannot be read as a file: the worker's read fails at once
    with pytest.raises(RagreviewError):
        list(import_pipeline.prepared(tmp_path, "ragbench", DEFAULTS))


def test_a_large_file_imports_through_a_worker_from_the_real_command(run_cli, tmp_path) -> None:
    """``python -m ragreview import`` on a file over the size limit: the spawned worker
    imports the main module, which must not run the CLI a second time."""
    row = json.loads(RAGBENCH.read_text(encoding="utf-8").splitlines()[0])
    filler = "Background text that no label mentions. " * 2_500  # ~100 KB
    row["documents_sentences"].append([["9a", filler]])
    path = tmp_path / "large.jsonl"
    count = import_pipeline.PARALLEL_MIN_BYTES // len(filler) + 1
    with path.open("w", encoding="utf-8") as fh:
        for n in range(count):
            fh.write(json.dumps({**row, "id": f"large-{n}"}) + "\n")
    assert import_pipeline.worth_it(path)
    result = run_cli("import", path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"{count} new" in result.stderr
    db = open_database(tmp_path / "large.ragreview.db")
    assert db.conn.execute("SELECT count(*) FROM records").fetchone()[0] == count


@pytest.mark.parametrize("source", [RAGBENCH, FACTSCORE, MTRAG])
def test_a_batch_prepared_at_once_is_each_record_prepared_alone(tmp_path, source) -> None:
    """``Preparing`` compresses and hashes a batch's sources at ``take`` (issue 27): the
    same Prepared values as preparing each record alone, errors kept in their place, each
    blob the line's bytes back, each hash the line's and record's own."""
    from ragreview.core.record import line_hash
    from ragreview.store import source_blob
    from ragreview.store.records import content_hash

    path = with_bad_lines(tmp_path, source)
    _fmt, stream = formats.read(path)
    read = list(stream)
    batch = preparing.Preparing(DEFAULTS)
    for entry in read[:3]:
        batch.add(entry)
    batches = batch.take()
    for entry in read[3:]:
        batch.add(entry)
    batches += batch.take()
    assert batch.take() == []
    expected = in_process(path)
    assert [str(e) if isinstance(e, InputError) else e for e in batches] == [
        str(e) if isinstance(e, InputError) else e for e in expected
    ]
    for entry, prepared in zip(read, batches, strict=True):
        if isinstance(prepared, InputError):
            continue
        line = entry.raw if entry.raw is not None else entry.source.encode()
        if prepared.stored_source is None:  # (a record without a source line)
            assert prepared.source == entry.source
            continue
        assert source_blob.unpack_bytes(prepared.stored_source) == line
        assert prepared.source is None
        assert prepared.hashes == (
            content_hash(prepared.data, line),
            line_hash(line) if entry.own_source else None,
        )
