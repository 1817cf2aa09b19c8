"""``export --as source`` writes the records nobody overrode straight from their stored
sources (``store.source_lines``, ``Traits.source_lines``): for every family it applies
to, a mix of untouched and overridden records exports the bytes the format's writer
gives when handed every record whole, and only the overridden ones are built."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from ragreview import formats
from ragreview.core.labels import CATALOGUE
from ragreview.services import export, labels, line_writes
from ragreview.store import open_database, source_blob, source_lines
from ragreview.store import records as store_records
from ragreview.store import settings as store_settings
from tests.formats.helpers import FIXTURES, HANDWRITTEN, run

# one file of each family whose writer is ``write_lines`` alone (each stores its
# sources compressed; an older import's MT-RAG sources are text)
FILES = {
    "ragbench": HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl",
    "factscore": FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl",
    "rgb": HANDWRITTEN / "rgb" / "prediction_en_ModelX_temp0.7_noise0.4_passage5_correct0.0.json",
    "mtrag": FIXTURES / "mtrag" / "responses-10.jsonl",
}


def test_the_families_that_write_lines_alone_take_the_fast_path() -> None:
    """(Ragas writes lines or a whole array, as its dataset came: not flagged.)"""
    flagged = {a.NAME for a in formats.catalogue.ADAPTERS if a.TRAITS.source_lines}
    assert flagged == set(FILES)


def _imported(tmp_path: Path, source: Path, copies: int = 1) -> tuple[object, str, Path]:
    """``source`` (its first 30 lines, repeated ``copies`` times under new line order)
    imported; the DB, the dataset and the file."""
    lines = source.read_text(encoding="utf-8").splitlines()[:30]
    path = tmp_path / source.name
    path.write_text("\n".join(lines * copies) + "\n", encoding="utf-8")
    db_path = tmp_path / "rows.db"
    result = run("import", path, "--db", db_path)
    assert result.exit_code == 0, result.output
    db = open_database(db_path)
    return db, store_records.datasets(db)[0]["name"], path


def _override_every_third(db, dataset: str) -> set[int]:
    """One judge label flipped on every third record, and on the record after each a
    human label equal to the judge's (written as read, by the writer); the rowids
    that carry human labels."""
    touched: set[int] = set()
    items = list(store_records.iterate(db, dataset))
    for number, item in enumerate(items):
        if number % 3 == 2:
            continue
        for name, targets in sorted(item.judge.items()):
            spec = CATALOGUE.get(name)
            if spec is None or spec.kind not in ("bool", "choice") or not targets:
                continue
            target, value = sorted(targets.items())[0]
            new = spec.cycle(value) if number % 3 == 0 else value
            labels.label(db, dataset, item.id, name, target, new, "tester")
            touched.add(item.rowid)
            break
    return touched


def _by_the_writer(db, dataset: str, reviewed_only: bool = False) -> bytes:
    """What the format's writer gives when handed every record whole (the export's
    general path)."""
    fmt = export.resolve_format(db, dataset, "source")
    config = export._writer_config(
        db, dataset, fmt, reviewed_only, store_settings.get_all(db, dataset)
    )
    status = "reviewed" if reviewed_only else None
    buffer = io.BytesIO()
    out = io.TextIOWrapper(buffer, encoding="utf-8", newline="")
    formats.adapter(fmt).write(store_records.iterate(db, dataset, status=status), out, config)
    out.flush()
    return buffer.getvalue()


@pytest.mark.parametrize("family", sorted(FILES))
def test_a_mix_of_overridden_and_untouched_records_exports_the_writer_s_bytes(
    tmp_path, family: str
) -> None:
    db, dataset, path = _imported(tmp_path, FILES[family])
    touched = _override_every_third(db, dataset)
    assert touched, "the fixture has labels to override"
    out = tmp_path / "out.jsonl"
    counted = []
    done = export.export(db, dataset, out, allow_loss=True, on_record=lambda: counted.append(1))
    total = export.total(db, dataset)
    assert done.count == total == len(counted)
    assert out.read_bytes() == _by_the_writer(db, dataset)
    # the records nobody labelled are their lines as read
    lines = path.read_bytes().splitlines()
    written = out.read_bytes().splitlines()
    rows = [item.rowid for item in store_records.iterate(db, dataset)]
    for number, rowid in enumerate(rows):
        if rowid not in touched:
            assert written[number] == lines[number]


@pytest.mark.parametrize("family", sorted(FILES))
def test_runs_give_plain_records_as_lines_and_only_the_others_whole(tmp_path, family: str) -> None:
    """In file order across pages and runs of every length; a record with human labels
    (overridden or not) is the only one built."""
    db, dataset, _path = _imported(tmp_path, FILES[family], copies=2)
    touched = _override_every_third(db, dataset)
    expected: list[bytes | int] = [
        item.rowid if item.rowid in touched else item.source_bytes
        for item in store_records.iterate(db, dataset)
    ]
    for batch, at_once in ((1, 1), (4, 3), (5, 16), (500, 2)):
        found: list[bytes | int] = []
        for lines, records in source_lines.runs(db, dataset, batch=batch, at_once=at_once):
            assert bool(lines) != bool(records) and len(lines) <= at_once
            found += [bytes(line) for line in lines] + [item.rowid for item in records]
        assert found == expected, (batch, at_once)


def test_a_page_of_compressed_and_text_sources_and_a_reviewed_subset(tmp_path) -> None:
    """A source kept as text (an older import's whole line) among compressed ones, and
    ``--reviewed-only``: the same bytes as the writer's."""
    source = FILES["ragbench"]
    db, dataset, _path = _imported(tmp_path, source, copies=3)
    rowids = [item.rowid for item in store_records.iterate(db, dataset)]
    whole = store_records.get(db, rowids[4]).source
    with db.conn:
        db.conn.execute("UPDATE records SET source = ? WHERE rowid = ?", (whole, rowids[4]))
    assert not isinstance(store_records.get(db, rowids[4]).stored_source, bytes)
    assert isinstance(store_records.get(db, rowids[5]).stored_source, bytes)
    _override_every_third(db, dataset)
    for item in list(store_records.iterate(db, dataset))[::2]:
        labels.mark(db, dataset, item.id, True, "tester")
    out = tmp_path / "all.jsonl"
    export.export(db, dataset, out, allow_loss=True)
    assert out.read_bytes() == _by_the_writer(db, dataset)
    reviewed = tmp_path / "reviewed.jsonl"
    done = export.export(db, dataset, reviewed, allow_loss=True, reviewed_only=True)
    assert reviewed.read_bytes() == _by_the_writer(db, dataset, reviewed_only=True)
    assert 0 < done.count < len(rowids)


def test_unpack_lines_gives_each_line_back(tmp_path) -> None:
    lines = [b'{"a": 1}', '{"\u00e9": "\U0001f600"}'.encode(), b"{}" * 5000]
    blobs = [source_blob.pack(line) for line in lines]
    assert [bytes(found) for found in source_blob.unpack_lines(blobs)] == lines
    assert [bytes(found) for found in source_blob.unpack_lines(blobs[:1])] == lines[:1]
    assert source_blob.unpack_lines([]) == []
    shutil.rmtree(tmp_path, ignore_errors=True)


LINE_RUN = [b'{"a": 1}', '{"\u00e9": "\U0001f600"}\r'.encode(), b"{}" * 5000]


def _decompressed() -> list[object]:
    return source_blob.unpack_lines([source_blob.pack(line) for line in LINE_RUN])


def test_lines_go_to_a_file_with_their_breaks_after_what_was_written_before(tmp_path) -> None:
    """To a file: gathered from zstd's buffer in one ``writev``, after the text and
    bytes written to the file before (the writer's, flushed)."""
    path = tmp_path / "out.jsonl"
    with path.open("w", encoding="utf-8", newline="") as out:
        write = line_writes.lines_writer(out)
        out.write("first\n")
        out.flush()
        write(_decompressed())
        write([b"last"])
    assert path.read_bytes() == b"first\n" + b"".join(line + b"\n" for line in LINE_RUN) + b"last\n"


def test_lines_go_to_a_stream_without_a_descriptor_joined() -> None:
    buffer = io.BytesIO()
    out = io.TextIOWrapper(buffer, encoding="utf-8", newline="")
    line_writes.lines_writer(out)(_decompressed())
    out.flush()
    assert buffer.getvalue() == b"".join(line + b"\n" for line in LINE_RUN)
    text = io.StringIO()
    line_writes.lines_writer(text)([b'{"a": 1}', b"{}"])
    assert text.getvalue() == '{"a": 1}\n{}\n'


def test_a_short_write_is_finished(tmp_path, monkeypatch) -> None:
    """``writev`` may write less than asked (a pipe, a signal): the rest follows."""
    real = os.writev

    def short(fd: int, parts: list[object]) -> int:
        return real(fd, parts[:1])  # the first line only, without its break

    monkeypatch.setattr(line_writes.os, "writev", short)
    path = tmp_path / "out.jsonl"
    with path.open("w", encoding="utf-8", newline="") as out:
        line_writes.lines_writer(out)(_decompressed())
    assert path.read_bytes() == b"".join(line + b"\n" for line in LINE_RUN)
