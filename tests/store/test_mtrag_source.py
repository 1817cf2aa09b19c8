"""MT-RAG's source line is stored compressed like every family's, and the metrics that
read it (``metric_writes._with_source``) take it compressed, or as text where an older
import kept it so (issue 27)."""

from __future__ import annotations

import pytest

from ragreview.store import metric_writes, open_database, source_blob
from ragreview.store import records as store_records
from ragreview.store.db import write
from tests.formats.helpers import FIXTURES, HANDWRITTEN, run

MTRAG_FILES = [
    FIXTURES / "mtrag" / "responses-10.jsonl",
    FIXTURES / "mtrag" / "taskb_input.jsonl",
    HANDWRITTEN / "mtrag" / "generation_eval_output.jsonl",
]


def _metric_rows(db) -> list[tuple]:
    return db.conn.execute(
        "SELECT record, layer, name, value FROM record_metrics ORDER BY record, layer, name"
    ).fetchall()


def _as_older_import(db) -> None:
    """Every source turned back into the text an import before this change stored."""
    rows = db.conn.execute("SELECT rowid, source FROM records").fetchall()
    with write(db.conn) as conn:
        conn.executemany(
            "UPDATE records SET source = ? WHERE rowid = ?",
            [(source_blob.unpack(blob), rowid) for rowid, blob in rows],
        )


@pytest.mark.parametrize("path", MTRAG_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("stored_as", ["blob", "text"])
@pytest.mark.parametrize("known", [False, True], ids=["read", "known"])
def test_mtrag_metrics_recomputed_from_the_stored_source_equal_the_import_s(
    tmp_path, path, stored_as, known
) -> None:
    """Recomputing every record's metrics from what is stored (as a label change does;
    ``known``: records in memory, the source read in SQL, as an import's labelled
    records) gives the rows the import computed from the row it parsed."""
    db_path = tmp_path / "review.db"
    assert run("import", path, "--db", db_path).exit_code == 0
    db = open_database(db_path)
    kinds = {k for (k,) in db.conn.execute("SELECT DISTINCT typeof(source) FROM records")}
    assert kinds == {"blob"}
    if stored_as == "text":
        _as_older_import(db)
    imported = _metric_rows(db)
    stored = store_records.get_many(
        db, [r for (r,) in db.conn.execute("SELECT rowid FROM records")]
    )
    # (the metrics do read it: each record is given its source row)
    for s in stored:
        seen = metric_writes._with_source(s.record, s.stored_source)
        assert "source" not in s.record.data
        assert seen.data["source"]["record"] == store_records.loads(s.source)
    given = {s.rowid: (s.record, s.judge) for s in stored} if known else None
    with write(db.conn):
        metric_writes.refresh(db, [s.rowid for s in stored], given, rebuild=True)
    assert _metric_rows(db) == imported
    db.conn.close()


def test_a_blob_another_tool_wrote_leaves_the_record_as_it_is(tmp_path) -> None:
    db_path = tmp_path / "review.db"
    assert run("import", MTRAG_FILES[0], "--db", db_path).exit_code == 0
    db = open_database(db_path)
    (s,) = store_records.get_many(db, [1])
    assert metric_writes._with_source(s.record, b"not zstd") is s.record
    db.conn.close()


def test_mtrag_lines_are_packed_at_the_familys_level_and_give_the_line_back(tmp_path) -> None:
    """MT-RAG's lines compress about as well at level 1 in less time, which its family
    declares (``Family.source_level``; the frame is exactly what a compressor at that
    level gives); a family that declares none packs at ``source_blob.LEVEL``."""
    import ragreview.families  # noqa: F401  (the built-in families, registered)
    from ragreview.core.families import FAMILIES

    assert {f.name: f.source_level for f in FAMILIES if f.source_level is not None} == {"mtrag": 1}
    path = MTRAG_FILES[0]
    db_path = tmp_path / "review.db"
    assert run("import", path, "--db", db_path).exit_code == 0
    db = open_database(db_path)
    blobs = [b for (b,) in db.conn.execute("SELECT source FROM records ORDER BY position")]
    db.conn.close()
    lines = path.read_bytes().splitlines()
    assert [source_blob.unpack_bytes(b) for b in blobs] == lines
    pack = source_blob.packer(1)
    assert blobs == [pack(line) for line in lines]
