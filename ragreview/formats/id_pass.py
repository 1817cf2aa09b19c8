"""The id pass: every line's id counted before the records are read.

Record ids follow docs/formats.md: a record's source id where the file holds it once,
else its record number. Knowing the counts first lets a line format stream its records
instead of holding the whole file; the pass finds each line's leading id with a regex
over raw bytes, never parsing a line.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from io import BufferedReader
from pathlib import Path
from typing import Any

import orjson

from ..core.errors import InputError
from .base import QUIET, ReadContext

# A member of the object with a string, number or literal value ("turn": 1,): what may
# come before the id with ``after_scalars``. Each one is a whole top-level member, so
# the id found after them is the row's own.
_SCALAR_MEMBER = (
    r'[ \t]*"(?:[^"\\\n]|\\.)*"[ \t]*:[ \t]*'
    r'(?:"(?:[^"\\\n]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)[ \t]*,'
)


def leading_ids(
    path: Path, text: str | None, field: str, ctx: ReadContext = QUIET, after_scalars: bool = False
) -> Counter[str] | None:
    """Every line's ``field`` when it is the line's first key (as RAGBench and RGB files
    write them) or, with ``after_scalars``, comes after members with plain values only
    (MT-RAG's ``task_id`` after ``conversation_id``), counted; None when any line does
    not start that way. Lets records stream without holding the whole file's records in
    memory. (Counted from a file on disk, they go to ``ctx.ids_counted``.)"""
    pattern = (
        r"[ \t]*\{"
        + (f"(?:{_SCALAR_MEMBER})*?" if after_scalars else "")
        + r'[ \t]*"'
        + re.escape(field)
        + r'"[ \t]*:[ \t]*("(?:[^"\\\n]|\\.)*"|-?\d+)[ \t]*[,}]'
    )
    if text is None:
        from . import parquet

        if parquet.is_table(path):  # the id column alone
            return parquet.count_ids(path, field)
    match = re.compile(pattern.encode()).match  # bytes: only the id needs decoding
    if text is not None:
        return _count_ids((match(line.encode()), line) for line in text.split("\n"))
    try:
        with path.open("rb") as fh:
            ids = _count_ids(_file_line_starts(fh, match))
    except OSError as err:
        raise InputError(str(path), None, None, f"cannot read file: {err.strerror}") from None
    ctx.ids_counted(ids)  # a re-import skips only lines whose id is unique in the file
    return ids


ID_PASS_BLOCK = 1 << 24  # bytes the id pass reads at a time: its memory stays flat

Match = Callable[[bytearray, int], "re.Match[bytes] | None"]
Start = tuple["re.Match[bytes] | None", Any]


def _file_line_starts(fh: BufferedReader, match: Match) -> Iterator[Start]:
    """``_line_starts`` over a file read block by block into one reused buffer (a new
    block object per read costs more, in page faults, than the scan itself)."""
    if fh.read(3) != b"\xef\xbb\xbf":  # a byte order mark is skipped
        fh.seek(0)
    buf = bytearray(ID_PASS_BLOCK)
    filled = 0
    while True:
        if filled == len(buf):  # a line longer than the buffer
            buf.extend(bytes(len(buf)))
        n = fh.readinto(memoryview(buf)[filled:])
        filled += n
        if not n:
            yield from _line_starts(buf, match, filled)
            return
        cut = buf.rfind(b"\n", 0, filled) + 1  # whole lines; the rest waits for more
        if cut:
            yield from _line_starts(buf, match, cut)
            buf[: filled - cut] = buf[cut:filled]
            filled -= cut


def _line_starts(data: bytearray, match: Match, end: int) -> Iterator[Start]:
    """(id match at the line's start, the line if there was none) for each line of
    ``data[:end]``. Lines are found with ``find``, not split out: the id pass then
    costs a third of reading the file line by line."""
    find = data.find
    pos = 0
    while pos < end:
        nl = find(b"\n", pos, end)
        stop = end if nl < 0 else nl
        found = match(data, pos)
        if found is not None and found.end() <= stop + 1:
            yield found, None
        else:
            yield None, data[pos:stop]
        pos = stop + 1


def _count_ids(lines: Iterable[Start]) -> Counter[str] | None:
    # (the ids listed, then counted at once: Counter's own loop is C, where one
    # ``counts[id] += 1`` a line called Counter.__missing__ in Python for each new id)
    ids: list[str] = []
    add = ids.append
    for found, line in lines:
        if found is None:
            if line and not line.isspace():
                return None  # a line that does not start with the id
            continue
        token = found.group(1)
        # An id that is no JSON string (a raw control character) or no integer a line can
        # hold (too long) is left out: its line is an error anyway.
        if token[0] == _QUOTE:
            try:
                add(orjson.loads(token))  # (a JSON string: a str)
            except orjson.JSONDecodeError:
                continue
        elif len(token) <= 20:
            add(str(int(token)))
    return Counter(ids)


_QUOTE = ord('"')
