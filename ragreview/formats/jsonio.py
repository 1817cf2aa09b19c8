"""Reading JSON Lines and JSON files record by record, with line numbers.

Benchmarks write ``NaN`` (MT-RAG via pandas) which strict parsers reject: orjson is
tried first for speed, then the standard library, which accepts it. Whether a record
may hold NaN or Infinity is the reader's call (``nan``): only MT-RAG's do. Hostile
input is bounded, not trusted (``json_limits``).
"""

from __future__ import annotations

import json
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from ..core.errors import InputError
from ..core.import_items import Unchanged
from . import json_limits
from .base import QUIET, KnownLines, ReadContext
from .json_limits import (
    TOO_DEEP,
    big_int,
    cut_deep,
    has_not_utf8,
    has_surrogate_escape,
    lone_surrogate,
    non_finite,
    not_utf8,
)

LINE_BUFFER = 1 << 20  # bytes read at a time when a file is read line by line


def parse_json(text: str | bytes) -> Any:
    """A JSON value; ValueError (with a clear reason) when it is not one."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as err:
        if str(err).startswith(("depth limit", "recursion limit")):
            raise ValueError(TOO_DEEP) from None  # json would recurse until it crashes
    try:
        return json.loads(text, parse_int=big_int)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


def check_regular(path: Path) -> None:
    """InputError unless ``path`` is a regular file (or a ``save_to_disk`` folder): a
    FIFO or a device would be read until it ends (maybe never), a directory cannot be."""
    try:
        mode = path.stat().st_mode
    except OSError as err:
        raise InputError(str(path), None, None, f"cannot read file: {err.strerror}") from None
    if stat.S_ISDIR(mode) and _table(path):
        return  # a folder written by datasets.save_to_disk: read as a table
    if not stat.S_ISREG(mode):
        what = f"cannot read file: {_file_kind(mode)}, not a regular file"
        raise InputError(str(path), None, None, what)


def _file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a file"


def _table(path: Path) -> bool:
    """Parquet or a datasets directory: rows read through ``formats.parquet``."""
    from . import parquet

    return parquet.is_table(path)


def read_text(path: Path) -> str:
    if _table(path):
        from . import parquet

        return parquet.text(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(str(path), None, None, f"cannot read file: {err.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Each byte that is not UTF-8 becomes a lone surrogate (``json_limits``): the
        # document still parses, and the record holding the byte is the one refused.
        text = data.decode("utf-8-sig", "surrogateescape")
    if not text.strip():
        raise InputError(str(path), None, None, "file is empty")
    return text


def is_json_lines(text: str) -> bool:
    """True when the first non-empty line is a complete JSON value on its own."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end]
        if line.strip():
            try:
                parse_json(line)
            except ValueError:
                return False
            return True
        start = end + 1
    return False


def first_line(path: Path) -> str | None:
    """The file's first non-empty line that is text (None when there is none), read
    without loading the whole file. (A line that is not UTF-8 is that record's error:
    the lines after it still tell the format.)"""
    if _table(path):
        from . import parquet

        return parquet.first_row(path)
    for _number, line in _file_lines(path):
        if isinstance(line, str):
            return line
    return None


def _file_lines(
    path: Path, report: Callable[[int], None] | None = None
) -> Iterator[tuple[int, str | InputError]]:
    """(line number, text or InputError) for each non-empty line, streamed from disk
    (split on "\n" only, as JSON Lines is: U+2028 may sit raw inside a string)."""
    for number, line, _raw in _file_lines_raw(path, report):
        assert not isinstance(line, Unchanged)  # (none known)
        yield number, line


def _file_lines_raw(
    path: Path, report: Callable[[int], None] | None = None, known: KnownLines | None = None
) -> Iterator[tuple[int, str | InputError | Unchanged, bytes]]:
    """``_file_lines`` with each line's bytes as read, without the line break (for
    parsing: orjson parses bytes faster than the same text as str); a line of
    ``known`` is not decoded."""
    try:
        # (a buffer larger than a line: with the default 8 KiB, every line of a RAGBench
        # row's size was put together from several reads, three times the cost of
        # reading it)
        fh = path.open("rb", buffering=LINE_BUFFER)
    except OSError as err:
        raise InputError(str(path), None, None, f"cannot read file: {err.strerror}") from None
    with fh:
        for number, raw in enumerate(fh, start=1):
            if report is not None:
                report(len(raw))
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw or raw.isspace():
                continue
            raw = raw.rstrip(b"\r\n")  # (before decoding: one copy of the line, not two)
            if known is not None and (same := known.unchanged(raw, number)) is not None:
                yield number, same, raw
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                yield number, _not_utf8_line(path, number, raw, err), raw
                continue
            yield number, line, raw


def _not_utf8_line(path: Path, number: int, raw: bytes, err: UnicodeDecodeError) -> InputError:
    """The error of a line that is not UTF-8, naming the field that holds the byte when
    the line is JSON around it."""
    try:
        value = parse_json(raw.decode("utf-8", "surrogateescape"))
    except ValueError:
        value = None
    found = None if value is None else not_utf8(value)
    if found is None:
        return InputError(str(path), number, None, f"not UTF-8 text (byte {err.start})")
    return InputError(str(path), number, found[0] or None, found[1])


def _text_lines(text: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        if line and not line.isspace():  # (strip() would copy every line)
            yield number, line


def iter_lines(
    path: Path, text: str | None = None, nan: bool = True, ctx: ReadContext = QUIET
) -> Iterator[tuple[int, str, Any]]:
    """(line number, raw line, parsed value or InputError) for each non-empty line.

    Without ``text`` the file is streamed from disk, so memory stays flat however
    large it is. With ``nan=False`` a line holding NaN, Infinity or an oversized
    integer is an error naming that field. ``ctx``: each line's bytes go to
    ``ctx.on_bytes``; read from disk, a line of ``ctx.known`` is an ``Unchanged``.
    """
    for number, line, value, _raw in iter_lines_raw(path, text, nan, ctx):
        yield number, line, value


def iter_lines_raw(
    path: Path, text: str | None = None, nan: bool = True, ctx: ReadContext = QUIET
) -> Iterator[tuple[int, str, Any, bytes | None]]:
    """``iter_lines`` with each line's UTF-8 bytes where the reader has them (a line
    read from disk, a parquet row's JSON text), else None: the importer hashes and
    compares those rather than encoding the text again."""
    report = ctx.on_bytes
    if text is None and _table(path):  # parquet rows, as the lines they would be
        from . import parquet

        for number, line, value, raw in parquet.rows(path, ctx.share):
            if report is not None:
                report(len(line) + 1)
            yield number, line, value, raw
        return
    if text is not None:
        bad_bytes = has_not_utf8(text)  # (read_text keeps them: see json_limits)
        for number, line in _text_lines(text):
            if report is not None:
                report(len(line) + 1)  # characters: close enough to bytes for a bar
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                value = _parse_line(path, number, line, nan)
                if bad_bytes and not isinstance(value, InputError):
                    found = not_utf8(value)
                    if found is not None:
                        value = InputError(str(path), number, found[0] or None, found[1])
            yield number, line, value, None
        return
    for number, decoded, raw in _file_lines_raw(path, report, ctx.known):
        if isinstance(decoded, (InputError, Unchanged)):
            yield number, "", decoded, None
            continue
        value = json_limits.loads_nan_fields(raw) if nan else None  # (pandas' NaN cells)
        if value is None:
            try:
                value = orjson.loads(raw)  # the common case, from the bytes
            except orjson.JSONDecodeError:  # NaN, or an error to report: as from the text
                value = _parse_line(path, number, decoded, nan)
        yield number, decoded, value, raw


def _parse_line(path: Path, number: int, line: str, nan: bool = True) -> Any:
    try:
        value = parse_json(line)
    except ValueError as err:
        return InputError(str(path), number, None, f"invalid JSON ({_reason(err)}{_column(err)})")
    found = None if nan else non_finite(value)  # (a walk: only where it matters)
    if found is None and has_surrogate_escape(line):
        found = lone_surrogate(value)
    if found is not None:
        return InputError(str(path), number, found[0] or None, found[1])
    return value


def load_document(path: Path, text: str | None = None) -> Any:
    """A whole-file JSON document (pretty-printed arrays and objects). NaN, Infinity and
    oversized integers parse (as non-finite floats): the reader reports the record
    that holds one (``non_finite``), the other records still import."""
    if text is None:
        text = read_text(path)
    try:
        return parse_json(text)
    except ValueError as err:
        if str(err) == TOO_DEEP:  # one record's value: the others must still import
            try:
                return parse_json(cut_deep(text))
            except ValueError as again:
                err = again
        line = getattr(err, "lineno", None)
        raise InputError(str(path), line, None, f"invalid JSON ({_reason(err)})") from None


def array_document(path: Path, text: str) -> list[Any] | None:
    """The file's records when it is one JSON array (pretty-printed or on one line),
    else None."""
    if not text.lstrip().startswith("["):
        return None
    try:
        document = load_document(path, text)
    except InputError:
        return None
    return document if isinstance(document, list) else None


def _column(err: ValueError) -> str:
    column = getattr(err, "colno", None)
    return f" at column {column}" if column else ""


def _reason(err: ValueError) -> str:
    msg = getattr(err, "msg", None) or str(err)
    reason = msg.split(":")[0] if isinstance(msg, str) else str(err)
    return reason.removesuffix(" at")  # ("Unterminated string starting at": the column follows)


def dumps_line(obj: Any) -> str:
    """One JSON Lines line. NaN and infinities become null (orjson; they are not JSON);
    adapters that must give NaN back write the source's own text. Integers orjson
    cannot hold (beyond 64 bits) fall back to the standard library."""
    try:
        return orjson.dumps(obj).decode()
    except TypeError:
        return json.dumps(obj, ensure_ascii=False)
