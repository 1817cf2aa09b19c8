"""Reading JSON Lines and JSON files record by record, with line numbers.

Benchmarks write ``NaN`` (MT-RAG via pandas) which strict parsers reject: orjson is
tried first for speed, then the standard library, which accepts it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import orjson

from ..core.errors import InputError


def parse_json(text: str | bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


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
    except UnicodeDecodeError as err:
        raise InputError(str(path), None, None, f"not UTF-8 text (byte {err.start})") from None
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
    """The file's first non-empty line (None when there is none), read without
    loading the whole file."""
    if _table(path):
        from . import parquet

        return parquet.first_row(path)
    for _number, line in _file_lines(path):
        return line if isinstance(line, str) else None
    return None


# Told how many bytes each line read by ``iter_lines`` took, for the import's progress bar
# (adapters that parse the whole file before yielding a record would otherwise leave it
# still). A context variable: a reader in another thread is never reported.
_on_bytes: ContextVar[Callable[[int], None] | None] = ContextVar("on_bytes", default=None)


@contextmanager
def reporting_bytes(callback: Callable[[int], None]) -> Iterator[None]:
    """While inside, every line ``iter_lines`` reads calls ``callback(bytes)``."""
    token = _on_bytes.set(callback)
    try:
        yield
    finally:
        _on_bytes.reset(token)


def _file_lines(
    path: Path, report: Callable[[int], None] | None = None
) -> Iterator[tuple[int, str | InputError]]:
    """(line number, text or InputError) for each non-empty line, streamed from disk
    (split on "\n" only, as JSON Lines is: U+2028 may sit raw inside a string)."""
    for number, line, _raw in _file_lines_raw(path, report):
        yield number, line


def _file_lines_raw(
    path: Path, report: Callable[[int], None] | None = None
) -> Iterator[tuple[int, str | InputError, bytes]]:
    """``_file_lines`` with each line's bytes as read (for parsing: orjson parses
    bytes faster than the same text as str)."""
    try:
        fh = path.open("rb")
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
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                error = InputError(str(path), number, None, f"not UTF-8 text (byte {err.start})")
                yield number, error, raw
                continue
            yield number, line.rstrip("\r\n"), raw


def _text_lines(text: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        if line and not line.isspace():  # (strip() would copy every line)
            yield number, line


def iter_lines(path: Path, text: str | None = None) -> Iterator[tuple[int, str, Any]]:
    """(line number, raw line, parsed value or InputError) for each non-empty line.

    Without ``text`` the file is streamed from disk, so memory stays flat however
    large it is.
    """
    report = _on_bytes.get()
    if text is None and _table(path):  # parquet rows, as the lines they would be
        from . import parquet

        for number, line, value in parquet.rows(path):
            if report is not None:
                report(len(line) + 1)
            yield number, line, value
        return
    if text is not None:
        for number, line in _text_lines(text):
            if report is not None:
                report(len(line) + 1)  # characters: close enough to bytes for a bar
            yield number, line, _parse_line(path, number, line)
        return
    for number, decoded, raw in _file_lines_raw(path, report):
        if isinstance(decoded, InputError):
            yield number, "", decoded
            continue
        try:
            value = orjson.loads(raw)  # the common case, from the bytes
        except orjson.JSONDecodeError:  # NaN, or an error to report: as from the text
            value = _parse_line(path, number, decoded)
        yield number, decoded, value


def _parse_line(path: Path, number: int, line: str) -> Any:
    try:
        return parse_json(line)
    except ValueError as err:
        return InputError(str(path), number, None, f"invalid JSON ({_reason(err)}{_column(err)})")


def raw_lines(path: Path) -> Iterator[bytes]:
    """The file's lines as bytes (a leading BOM removed), streamed."""
    try:
        fh = path.open("rb")
    except OSError as err:
        raise InputError(str(path), None, None, f"cannot read file: {err.strerror}") from None
    with fh:
        first = True
        for raw in fh:
            if first:
                first = False
                if raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
            yield raw


def load_document(path: Path, text: str | None = None) -> Any:
    """A whole-file JSON document (pretty-printed arrays and objects)."""
    if text is None:
        text = read_text(path)
    try:
        return parse_json(text)
    except ValueError as err:
        line = getattr(err, "lineno", None)
        raise InputError(str(path), line, None, f"invalid JSON ({_reason(err)})") from None


def _column(err: ValueError) -> str:
    column = getattr(err, "colno", None)
    return f" at column {column}" if column else ""


def _reason(err: ValueError) -> str:
    msg = getattr(err, "msg", None) or str(err)
    return msg.split(":")[0] if isinstance(msg, str) else str(err)


def dumps_line(obj: Any) -> str:
    """One JSON Lines line. NaN and infinities become null (orjson; they are not JSON);
    adapters that must give NaN back write the source's own text. Integers orjson
    cannot hold (beyond 64 bits) fall back to the standard library."""
    try:
        return orjson.dumps(obj).decode()
    except TypeError:
        return json.dumps(obj, ensure_ascii=False)
