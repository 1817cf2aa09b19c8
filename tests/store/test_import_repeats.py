"""The importer never lets a record overwrite another of the same import."""

from __future__ import annotations

from ragreview.store import importer, open_database
from ragreview.store import records as store_records

from .test_records import item


def test_a_repeated_id_in_one_import_keeps_the_first(tmp_path) -> None:
    db = open_database(tmp_path / "t.ragreview.db")
    items = [item(1, "a", "first"), item(2, "b"), item(5, "a", "second")]
    summary = importer.import_records(db, "ds", "ragreview", None, items)
    assert (summary.inserted, summary.updated, summary.unchanged) == (2, 0, 0)
    assert summary.repeated == [("a", 1, 5)]
    stored = store_records.find(db, "a", "ds")
    assert stored.record.documents[0].sentences[0][1] == "first"
    db.conn.close()


def test_a_repeat_across_imports_is_an_update_not_a_repeat(tmp_path) -> None:
    db = open_database(tmp_path / "t.ragreview.db")
    importer.import_records(db, "ds", "ragreview", None, [item(1, "a", "old")])
    summary = importer.import_records(db, "ds", "ragreview", None, [item(1, "a", "new")])
    assert (summary.updated, summary.repeated) == (1, [])
    db.conn.close()


def test_the_import_command_reports_a_repeat_it_did_not_store(tmp_path) -> None:
    """What the importer kept out is an error naming both lines (for a reader that let
    a repeated id through)."""
    from ragreview.formats import Source
    from ragreview.services import importing

    class LetThrough(Source):  # a reader that lets a repeated id through
        def records(self, ctx=None):
            return iter([item(1, "a"), item(4, "a", "other")])

    path = tmp_path / "in.jsonl"
    path.write_text("{}\n")
    db = open_database(tmp_path / "t.ragreview.db")
    summary, errors = importing.store(db, LetThrough(path, "ragreview", None), "ds")
    assert summary.inserted == 1
    assert [str(e) for e in errors] == [
        f"{path}:4: id: 'a' repeats (first on line 1): not imported"
    ]
    db.conn.close()


def test_repeats_across_batches_and_imports_keep_the_first_position(tmp_path) -> None:
    """The ids an import has seen live in a TEMP table, not a dict that grows with the
    file (issue 27's peak memory): a repeat several batches later still names the first
    position, each import starts afresh, and the table is gone afterwards."""
    db = open_database(tmp_path / "t.ragreview.db")
    n = 2 * importer.METRIC_BATCH + 5
    items = [item(i, f"r{i}") for i in range(1, n + 1)] + [item(n + 1, "r3", "again")]
    summary = importer.import_records(db, "ds", "ragreview", None, items)
    assert (summary.inserted, summary.repeated) == (n, [("r3", 3, n + 1)])
    again = importer.import_records(db, "ds", "ragreview", None, [item(7, "r3"), item(9, "r3")])
    assert again.repeated == [("r3", 7, 9)]
    temp = db.conn.execute("SELECT name FROM sqlite_temp_master WHERE type = 'table'").fetchall()
    assert temp == []
    db.conn.close()
