"""One copy of each record's text (store.compact): a source line whose lists the
canonical data holds is stored without them and rebuilt byte for byte."""

from __future__ import annotations

import json
import math
from pathlib import Path

import orjson
import pytest

from ragreview import formats
from ragreview.core.record import ImportItem
from ragreview.store import compact, open_database
from ragreview.store import records as store_records
from tests.formats.helpers import HANDWRITTEN, run

RAGBENCH = HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl"


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
def test_a_line_in_any_json_style_is_stored_without_its_sentences_and_rebuilt_exactly(
    tmp_path, writer
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(WRITERS[writer](_rows())) + "\n", encoding="utf-8")
    for item in items(path):
        assert item.source is not None
        kept = compact.compact(item.record.data, item.row, item.source)
        assert kept is not None, writer
        rest, refs = kept
        # the sentences, the documents and the response, whole: all in data already
        lists = [d["sentences"] for d in item.record.data["documents"]]
        lists.append(item.record.data["response"])
        for pairs in lists:  # (a short text whole is not worth a cut: kept)
            if len(" ".join(s for _k, s in pairs)) >= compact.JOINED_MIN:
                assert not [s for _k, s in pairs if s[:30] in rest], writer
        assert compact.rebuild(rest, refs, orjson.dumps(item.record.data).decode()) == item.source


def test_the_line_comes_back_exactly_whatever_the_data_holds(tmp_path) -> None:
    """A cut is made only where the value, written in the line's style, is the line's
    text there: a row changed after parsing, another writer's escapes or NaN leave that
    value in the line, and the line still comes back byte for byte."""
    path = compact_copy(RAGBENCH, tmp_path)
    item = items(path)[0]
    row = json.loads(item.source or "")  # equal lists, but not the data's own: joined only
    rest, refs = compact.compact(item.record.data, row, item.source or "") or ("", "")
    assert '"documents_sentences":[[[' in rest and '"documents":,' in rest
    assert compact.rebuild(rest, refs, dict(item.record.data)) == item.source
    item.row["documents_sentences"][0][0][1] = "changed after parsing"  # (data's list too)
    rest, refs = compact.compact(item.record.data, item.row, item.source or "") or ("", "")
    assert compact.rebuild(rest, refs, dict(item.record.data)) == item.source
    nan_line = (item.source or "").replace('"relevance_score":0.6', '"relevance_score":NaN')
    nan_row = {**item.row, "relevance_score": math.nan}  # a line with NaN (MT-RAG's pandas)
    assert "NaN" in nan_line
    rest, refs = compact.compact(item.record.data, nan_row, nan_line) or ("", "")
    assert compact.rebuild(rest, refs, dict(item.record.data)) == nan_line


def test_an_older_imports_refs_still_rebuild() -> None:
    """Before any JSON style was kept, the row was stored as compact JSON with the shared
    values null and a list of [row path, data path(, separator)] refs."""
    data = {"documents": [{"sentences": [["0a", "One."], ["0b", "Two."]]}]}
    source = '{"id":"x","documents_sentences":[[["0a","One."],["0b","Two."]]],"doc":"One. Two."}'
    rest = '{"id":"x","documents_sentences":[null],"doc":null}'
    refs = '[[["documents_sentences",0],["documents",0,"sentences"]],[["doc"],["documents",0,"sentences"]," "]]'
    assert compact.rebuild(rest, refs, data) == source


def test_a_compact_file_imports_exports_and_merges_as_the_spaced_one(tmp_path) -> None:
    path = compact_copy(RAGBENCH, tmp_path)
    db_path = tmp_path / "rows.db"
    assert run("import", path, "--db", db_path).exit_code == 0
    db = open_database(db_path)
    stored = db.conn.execute("SELECT count(*) FROM records WHERE source_refs IS NULL")
    assert stored.fetchone() == (0,)
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
    # a merged DB keeps the sources (whole); (a DB merged with itself is refused: a
    # second review of the same file, without the label)
    second = tmp_path / "second.db"
    assert run("import", path, "--db", second).exit_code == 0
    merged = tmp_path / "merged.db"
    assert run("merge", db_path, second, "--into", merged).exit_code == 0
    db = open_database(merged)
    assert [r.source for r in store_records.iterate(db, path.stem)] == lines


@pytest.mark.parametrize("fixture", [RAGBENCH])
def test_search_still_finds_record_text(tmp_path, fixture) -> None:
    from ragreview.store import browse

    path = compact_copy(fixture, tmp_path)
    db_path = tmp_path / "rows.db"
    assert run("import", path, "--db", db_path).exit_code == 0
    db = open_database(db_path)
    sentence = json.loads(path.read_text().splitlines()[2])["documents_sentences"][0][0][1]
    found = browse.rowids(db, path.stem, browse.ListFilter(text=sentence[5:30]))
    assert [store_records.get(db, r).id for r in found] == ["finqa-3"]


def test_item_lists_a_reviewer_may_edit_are_never_shared() -> None:
    """An edited fact list must not change the stored source (it is the original)."""
    facts = [["f1", "A fact.", "a"]]
    statements = [["s1", "A statement."]]
    row = {"facts": facts, "statements": statements}
    data = {"facts": facts, "statements": statements}
    assert compact.compact(data, row, orjson.dumps(row).decode()) is None
