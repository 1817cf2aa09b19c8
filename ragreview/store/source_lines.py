"""``export --as source`` reading records as their source lines (issue 27).

A record nobody overrode is written back as its source line, byte for byte
(``formats.line_writer.write_lines``). For those the export needs the stored source alone:
no ``StoredRecord``, no layers, no data. ``runs`` reads a dataset in file order and
gives consecutive records either as their lines (decompressed together, as views
into zstd's buffer: ``source_blob.unpack_lines``) or, for a record with human labels
or whose source is not kept whole, as the ``StoredRecord`` the format's writer needs.

The minimal script the export is measured against reads each line from a table and
writes it (bench/export_bench.py); building a record per line, its layers read and a
page of them held while a thread decompressed the next, cost the export about twice
the script's CPU.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from . import source_blob
from .records import StoredRecord, get_many

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

# Lines decompressed and given at once: about 100 KB of RAGBench rows, a write's worth
# that stays in the cache from decompression to write (``source_blob.unpack_lines``).
LINES_AT_ONCE = 16

# A record is written from its source alone when it has no human label and its source
# is kept whole (a compressed line, or text; not an older import's compacted line,
# which is rebuilt from the data, ``store.compact``). The labelled records are read
# once, as a set: a ``NOT EXISTS`` probe of ``human_labels`` per row cost a fifth of
# the page reads (0.15-0.2 s CPU at 100,000 rows).
_KEPT_WHOLE = "source IS NOT NULL AND source_refs IS NULL"


def runs(
    db: sqlite_utils.Database,
    dataset: str,
    *,
    status: str | None = None,
    batch: int = 500,
    at_once: int = LINES_AT_ONCE,
) -> Iterator[tuple[list[Any], list[StoredRecord]]]:
    """The dataset's records (of ``status``, if given) in file order (``position,
    rowid``, as ``records.iterate``), as runs ``(lines, [])`` or ``([], records)``:
    ``lines`` the UTF-8 bytes of consecutive plain records' source lines (bytes-like,
    without the line break; at most ``at_once``), ``records`` consecutive others,
    whole (layers, data and source; their judge layers read with them)."""
    where = "dataset = ?" + (" AND status = ?" if status is not None else "")
    params: list[Any] = [dataset] if status is None else [dataset, status]
    sql = (
        f"SELECT rowid, position, source, {_KEPT_WHOLE} FROM records "
        f"WHERE {where} AND (position, rowid) > (?, ?) ORDER BY position, rowid LIMIT ?"
    )
    last: tuple[int, int] = (-1, -1)
    conn = db.conn
    # (rowids are unique across datasets: another dataset's labelled records do no harm)
    labelled = {rowid for (rowid,) in conn.execute("SELECT DISTINCT record FROM human_labels")}
    while True:
        rows = conn.execute(sql, [*params, *last, batch]).fetchall()
        if not rows:
            return
        # (row: rowid, position, source, kept whole)
        plain = [bool(row[3]) and row[0] not in labelled for row in rows]
        # the page's other records read together (a reviewed dataset has many, often
        # one between two plain ones: a read per run cost more than main's per page)
        built = _records(db, [row[0] for row, p in zip(rows, plain, strict=True) if not p])
        pending: list[Any] = []  # the sources of a run of plain records
        others: list[StoredRecord] = []  # a run of the rest
        for (rowid, _position, source, _whole), is_plain in zip(rows, plain, strict=True):
            if is_plain:
                if others:
                    yield [], others
                    others = []
                pending.append(source)
                if len(pending) == at_once:
                    yield _lines(pending), []
                    pending = []
            else:
                if pending:
                    yield _lines(pending), []
                    pending = []
                others.append(built[rowid])
        if pending:
            yield _lines(pending), []
        if others:
            yield [], others
        end = rows[-1]
        last = (end[1], end[0])


def _lines(sources: list[str | bytes]) -> list[Any]:
    """The lines' UTF-8 bytes: compressed ones decompressed together, text encoded
    (without a trailing line break, as ``write_lines`` writes a record's source; a
    compressed line never has one, ``source_blob.pack``)."""
    if all(type(source) is bytes for source in sources):
        return source_blob.unpack_lines(sources)  # type: ignore[arg-type]
    return [
        source_blob.unpack_bytes(source)
        if isinstance(source, bytes)
        else source.encode().rstrip(b"\n")
        for source in sources
    ]


def _records(db: sqlite_utils.Database, rowids: list[int]) -> dict[int, StoredRecord]:
    """The records of ``rowids`` whole, by rowid."""
    return {item.rowid: item for item in get_many(db, rowids)} if rowids else {}
