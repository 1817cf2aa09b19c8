"""Writing an export's JSON lines (``--as source`` of the line formats): an unchanged
record is its original line, byte for byte; a corrected one its source row patched by
the format's ``fix``. Lines go out as UTF-8 bytes, several to a write."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from ..core.errors import InputError
from .base import ExportRecord
from .common import changed, dumps_source, is_compact, loads_source

# Lines joined per write. One write per line costs a system call each; joining hundreds
# makes strings of megabytes, each in freshly mapped memory (page faults): a handful,
# about 100 KB of RAGBench rows, is the fastest (bench/export_bench.py).
LINES_PER_WRITE = 8


def write_lines(
    items: Iterable[ExportRecord],
    out: TextIO,
    what: str,
    fix: Callable[[dict[str, Any], ExportRecord], None],
) -> int:
    """Write JSON Lines sources back: an unchanged record is its original line, byte for
    byte; a corrected one is its source row after ``fix(row, item)`` patched it.

    Lines go out as UTF-8 bytes: a stored record's line is kept as bytes
    (``source_bytes``), and decoding it only for the text file to encode it again was a
    fifth of an ``export --as source`` (issue 27)."""
    write = byte_writer(out)
    count = 0
    lines: list[bytes] = []
    for item in items:
        raw = _source_bytes(item)
        if raw is None:
            raise InputError(item.record.id, None, "source", f"record has no {what} source")
        if not item.human or not changed(item.judge, item.human):
            lines.append(raw.rstrip(b"\n"))
        else:
            source = raw.decode()
            row = loads_source(source)
            fix(row, item)
            lines.append(dumps_source(row, compact=is_compact(source)).encode())
        count += 1
        if len(lines) == LINES_PER_WRITE:
            lines.append(b"")  # (the last line's break, without copying the joined lines)
            write(b"\n".join(lines))
            lines.clear()
    if lines:
        lines.append(b"")
        write(b"\n".join(lines))
    return count


def _source_bytes(item: ExportRecord) -> bytes | None:
    raw = getattr(item, "source_bytes", None)  # (a stored record has them as read)
    if raw is not None:
        return raw
    return None if item.source is None else item.source.encode()


def byte_writer(out: TextIO) -> Callable[[bytes], Any]:
    """Write UTF-8 bytes to ``out``: straight to its binary buffer when it is a UTF-8
    text file on a system whose line separator is "\\n" (the export's own file is
    opened with ``newline=""``, ``output_file.replacing_text``; standard output writes
    "\\n" as it is there), else as text."""
    buffer = getattr(out, "buffer", None)
    encoding = (getattr(out, "encoding", None) or "").lower().replace("_", "-")
    if buffer is not None and encoding in ("utf-8", "utf8") and os.linesep == "\n":
        out.flush()  # (anything written as text before goes first)
        return buffer.write
    return lambda data: out.write(data.decode())
