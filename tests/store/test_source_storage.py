"""How a record's source line is stored (store.source_blob, store.compact): whole and
compressed, whatever JSON style wrote it, and given back byte for byte; older imports'
compacted lines still rebuild, export and merge exactly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest

from ragreview import formats
from ragreview.core.import_items import ImportItem
from ragreview.core.where import Condition
from ragreview.store import browse, compact, open_database, source_blob
from ragreview.store import records as store_records
from tests.formats.helpers import FIXTURES, HANDWRITTEN, run

RAGBENCH = HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl"
# A DB made by ragreview 5c74f00 (before sources were compressed) from the files beside
# it: the covidqa rows in five JSON styles, each stored as a compacted line.
OLD_DB = FIXTURES / "db" / "compact_styles_5c74f00.ragreview.db"
OLD_INPUTS = FIXTURES / "db" / "compact_styles"


def compact_copy(path: Path, folder: Path) -> Path:
    """The fixture's rows written as compact JSON (orjson's form, as exports write)."""
    out = folder / path.name
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return out


def items(path: Path) -> list[ImportItem]:
    _fmt, stream = formats.read(path)
    return [e for e in stream if isinstance(e, ImportItem)]


def _pandas_lines(rows: list[dict]) -> list[str]:
    import pandas

    text = pandas.DataFrame(rows).to_json(orient="records", lines=True)
    return text.rstrip("\n").split("\n")


# How people write JSON Lines: orjson / compact, json.dumps' defaults (", " and ": ",
# \u escapes), json.dumps without ASCII escapes, compact ASCII, and pandas (\/).
WRITERS = {
    "orjson": lambda rows: [orjson.dumps(r).decode() for r in rows],
    "json.dumps": lambda rows: [json.dumps(r) for r in rows],
    "json.dumps utf-8": lambda rows: [json.dumps(r, ensure_ascii=False) for r in rows],
    "compact ascii": lambda rows: [json.dumps(r, separators=(",", ":")) for r in rows],
    "pandas": _pandas_lines,
}


def _rows() -> list[dict]:
    rows = [json.loads(line) for line in RAGBENCH.read_text(encoding="utf-8").splitlines()]
    rows[0]["question"] = "Is H\u00e9l\u00e8ne's dose 5/10 mg? \u201cyes\u201d"  # non-ASCII, "/"
    rows[0]["documents_sentences"][0][0][1] += " (see a/b, \u00e9t\u00e9)"
    rows[0]["documents"][0] = " ".join(s for _k, s in rows[0]["documents_sentences"][0])
    return rows


@pytest.mark.parametrize("writer", WRITERS)
def test_a_line_in_any_json_style_is_stored_compressed_and_exported_byte_for_byte(
    tmp_path, writer
) -> None:
    path = tmp_path / "rows.jsonl"
    text = "\n".join(WRITERS[writer](_rows())) + "\n"
    path.write_text(text, encoding="utf-8")
    db_path = tmp_path / "rows.db"
    assert run("import", path, "--db", db_path).exit_code == 0
    db = open_database(db_path)
    stored = db.conn.execute(
        "SELECT typeof(source), source_refs, length(source) FROM records ORDER BY position"
    ).fetchall()
    assert {(kind, refs) for kind, refs, _n in stored} == {("blob", None)}
    lines = text.splitlines()
    assert sum(n for *_, n in stored) < sum(len(line.encode()) for line in lines)
    assert [r.source for r in store_records.iterate(db, "rows")] == lines
    db.conn.close()
    out = tmp_path / "out.jsonl"
    assert run("export", path, "--db", db_path, "--out", out).exit_code == 0
    assert out.read_bytes() == path.read_bytes()


def test_pack_gives_the_bytes_back_exactly() -> None:
    for line in ["", "{}", '{"a": "\u00e9\u201c\\u00e9\\/"}', "x" * 100_000]:
        blob = source_blob.pack(line)
        assert source_blob.unpack(blob) == line
        assert source_blob.pack(line.encode()) == blob
        assert source_blob.text(blob) == line
    lines = ["", "{}", '{"a": "\u00e9\u201c\\/"}', "x" * 100_000] * 3
    assert source_blob.unpack_many([source_blob.pack(line) for line in lines]) == [
        line.encode() for line in lines
    ]
    assert source_blob.text("kept whole") == "kept whole"
    assert source_blob.text(None) is None
    assert source_blob.text(b"not zstd") is None  # (a BLOB some other tool wrote)


def test_an_older_imports_refs_still_rebuild() -> None:
    """Before any JSON style was kept, the row was stored as compact JSON with the shared
    values null and a list of [row path, data path(, separator)] refs."""
    data = {"documents": [{"sentences": [["0a", "One."], ["0b", "Two."]]}]}
    source = '{"id":"x","documents_sentences":[[["0a","One."],["0b","Two."]]],"doc":"One. Two."}'
    rest = '{"id":"x","documents_sentences":[null],"doc":null}'
    refs = '[[["documents_sentences",0],["documents",0,"sentences"]],[["doc"],["documents",0,"sentences"]," "]]'
    assert compact.rebuild(rest, refs, data) == source


def _old_copy(tmp_path: Path) -> Path:
    """The old DB and its inputs copied (the DB names its inputs by file name)."""
    folder = tmp_path / "old"
    shutil.copytree(OLD_INPUTS, folder)
    shutil.copyfile(OLD_DB, folder / "old.ragreview.db")
    return folder


def test_an_older_db_of_compacted_lines_exports_every_style_byte_for_byte(tmp_path) -> None:
    folder = _old_copy(tmp_path)
    db_path = folder / "old.ragreview.db"
    inputs = sorted(folder.glob("*.jsonl"))
    assert len(inputs) == 5
    db = open_database(db_path)
    refs = db.conn.execute("SELECT count(*) FROM records WHERE source_refs IS NOT NULL")
    assert refs.fetchone() == (20,)  # (every line compacted, in its own style)
    db.conn.close()
    for path in inputs:
        out = tmp_path / f"{path.stem}.out.jsonl"
        result = run("export", db_path, "--dataset", path.stem, "--out", out)
        assert result.exit_code == 0, result.output
        assert out.read_bytes() == path.read_bytes(), path.name
    # a re-import of an unchanged file skips its lines; a changed line is stored anew,
    # compressed, its old refs gone
    path = folder / "covidqa_json_dumps.jsonl"
    result = run("import", path, "--db", db_path)
    assert "0 new, 0 changed, 4 unchanged" in result.output
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"dataset_name": "', '"dataset_name": "x')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert "1 changed" in run("import", path, "--db", db_path).output
    db = open_database(db_path)
    assert [r.source for r in store_records.iterate(db, path.stem)] == lines
    kinds = db.conn.execute(
        "SELECT typeof(source), source_refs IS NULL FROM records WHERE dataset = ? "
        "ORDER BY position",
        (path.stem,),
    ).fetchall()
    assert kinds == [("text", 0), ("blob", 1), ("text", 0), ("text", 0)]


def test_an_older_db_merges_with_a_new_one_keeping_every_line(tmp_path) -> None:
    folder = _old_copy(tmp_path)
    path = folder / "covidqa_pandas.jsonl"
    new = tmp_path / "new.db"
    assert run("import", path, "--db", new).exit_code == 0
    assert run("label", path, "finqa-3", "relevant", "0c", "true", "--db", new).exit_code == 0
    merged = tmp_path / "merged.db"
    result = run("merge", folder / "old.ragreview.db", new, "--into", merged)
    assert result.exit_code == 0, result.output
    db = open_database(merged)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [r.source for r in store_records.iterate(db, path.stem)] == lines


def test_a_compact_file_imports_exports_and_merges_as_the_spaced_one(tmp_path) -> None:
    path = compact_copy(RAGBENCH, tmp_path)
    db_path = tmp_path / "rows.db"
    assert run("import", path, "--db", db_path).exit_code == 0
    db = open_database(db_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [r.source for r in store_records.iterate(db, path.stem)] == lines
    db.conn.close()
    out = tmp_path / "out.jsonl"
    assert run("export", path, "--db", db_path, "--out", out).exit_code == 0
    assert out.read_text(encoding="utf-8") == path.read_text(encoding="utf-8")
    # an override reaches the export, everything else as it was
    assert run("label", path, "finqa-3", "relevant", "0c", "true", "--db", db_path).exit_code == 0
    assert run("export", path, "--db", db_path, "--out", out, "--force").exit_code == 0
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    original = [json.loads(line) for line in lines]
    assert [w for w, o in zip(written, original, strict=True) if w != o][0]["id"] == "finqa-3"
    # a merged DB keeps the sources; (a DB merged with itself is refused: a second
    # review of the same file, without the label)
    second = tmp_path / "second.db"
    assert run("import", path, "--db", second).exit_code == 0
    merged = tmp_path / "merged.db"
    assert run("merge", db_path, second, "--into", merged).exit_code == 0
    db = open_database(merged)
    assert [r.source for r in store_records.iterate(db, path.stem)] == lines


@pytest.mark.parametrize("fixture", [RAGBENCH])
def test_search_still_finds_record_text(tmp_path, fixture) -> None:
    path = compact_copy(fixture, tmp_path)
    db_path = tmp_path / "rows.db"
    assert run("import", path, "--db", db_path).exit_code == 0
    db = open_database(db_path)
    sentence = json.loads(path.read_text().splitlines()[2])["documents_sentences"][0][0][1]
    found = browse.rowids(db, path.stem, browse.ListFilter(text=sentence[5:30]))
    assert [store_records.get(db, r).id for r in found] == ["finqa-3"]


def test_a_field_only_the_compressed_source_holds_still_filters(tmp_path) -> None:
    """``field=value`` reads the source row where the record lacks the field: through
    ``ragreview_source`` for a compressed line (store.record_filter)."""
    rows = [json.loads(line) for line in RAGBENCH.read_text(encoding="utf-8").splitlines()]
    for i, row in enumerate(rows):
        row["annotator_batch"] = f"batch-{i % 2}"
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db_path = tmp_path / "rows.db"
    assert run("import", path, "--db", db_path).exit_code == 0
    db = open_database(db_path)
    assert "annotator_batch" not in db.conn.execute("SELECT data FROM records").fetchone()[0]
    flt = browse.ListFilter(where=(Condition("annotator_batch", "batch-1"),))
    found = [store_records.get(db, r).id for r in browse.rowids(db, path.stem, flt)]
    assert found == [rows[1]["id"], rows[3]["id"]]
    db.conn.close()
    reader = open_database(db_path, read_only=True)  # (registered there too)
    assert len(browse.rowids(reader, path.stem, flt)) == 2


# file -> how its records' sources are stored: compressed, every family's (MT-RAG's too:
# its metrics unpack it, ``metric_writes._with_source``)
LINE_FIXTURES = {
    FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl": "blob",
    FIXTURES / "mtrag" / "responses-10.jsonl": "blob",
    FIXTURES / "mtrag" / "taskb_input.jsonl": "blob",
    RAGBENCH: "blob",
}


@pytest.mark.parametrize("path", LINE_FIXTURES, ids=lambda p: p.name)
def test_every_real_line_fixture_exports_byte_for_byte(tmp_path, path) -> None:
    """Unchanged records come back as their lines exactly."""
    db_path = tmp_path / "review.db"
    assert run("import", path, "--db", db_path).exit_code == 0
    db = open_database(db_path)
    kinds = {k for (k,) in db.conn.execute("SELECT DISTINCT typeof(source) FROM records")}
    assert kinds == {LINE_FIXTURES[path]}
    db.conn.close()
    out = tmp_path / "out.jsonl"
    assert run("export", db_path, "--out", out).exit_code == 0
    assert out.read_bytes() == path.read_bytes()


def test_an_export_reads_a_record_s_data_only_with_its_page_when_asked(tmp_path) -> None:
    """``iterate(sources=True)`` (an export) leaves the canonical data unread: a page of
    records written back from their source alone reads none, and the first record that
    asks (a reviewed one, to be patched) reads its page's, giving what ``get`` gives."""
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    db_path = tmp_path / "rows.db"
    assert run("import", path, "--db", db_path).exit_code == 0
    db = open_database(db_path)
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    paged = list(store_records.iterate(db, "rows", batch=2, sources=True))

    def data_reads() -> int:
        return len([s for s in statements if s.startswith("SELECT rowid, data FROM")])

    assert len(paged) == 4 and data_reads() == 0
    assert [r.source for r in paged] == path.read_text(encoding="utf-8").splitlines()
    last = paged[-1]
    assert last.data == store_records.get(db, last.rowid).data  # read with its page
    assert last.record == store_records.get(db, last.rowid).record
    assert data_reads() == 1
    assert paged[-2].record.id == store_records.get(db, paged[-2].rowid).record.id
    assert data_reads() == 1  # (the same page)
    assert paged[0].data == store_records.get(db, paged[0].rowid).data
    assert data_reads() == 2


def _unpacking_threads() -> list[str]:
    import threading

    return [t.name for t in threading.enumerate() if t.name.startswith("ragreview-unpack")]


def test_an_export_s_pages_decompress_ahead_in_order_and_the_thread_ends(tmp_path) -> None:
    """``iterate(sources=True)`` decompresses the next page's sources on a thread while
    a page is used (``source_blob.Unpacking``): every record still comes with its own
    line, in file order, equal to the plain iteration's; and the thread ends with the
    iteration, whether it ran to the end or the reader stopped early."""
    path = tmp_path / "rows.jsonl"
    rows = _rows() * 3  # 12 records: pages of 5, 5 and 2
    for number, row in enumerate(rows):
        row["id"] = f"r{number}"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db_path = tmp_path / "rows.db"
    assert run("import", path, "--db", db_path).exit_code == 0
    db = open_database(db_path)
    plain = list(store_records.iterate(db, "rows", batch=5))
    paged = list(store_records.iterate(db, "rows", batch=5, sources=True))
    assert [r.rowid for r in paged] == [r.rowid for r in plain]
    assert [r.source_bytes for r in paged] == [r.source_bytes for r in plain]
    assert [r.source for r in paged] == path.read_text(encoding="utf-8").splitlines()
    assert _unpacking_threads() == []
    stopped = store_records.iterate(db, "rows", batch=5, sources=True)
    assert next(stopped).source == plain[0].source  # (page 2 is being decompressed)
    stopped.close()
    assert _unpacking_threads() == []
