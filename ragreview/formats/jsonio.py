"""Reading JSON Lines and JSON files record by record, with line numbers.

Benchmarks write ``NaN`` (MT-RAG via pandas) which strict parsers reject: orjson is
tried first for speed, then the standard library, which accepts it. Whether a record
may hold NaN or Infinity is the reader's call (``nan``): only MT-RAG's do.

Hostile input is bounded, not trusted: a value nested deeper than orjson's limit
(1024) or an integer of more than ``MAX_INT_DIGITS`` digits is an error at its line,
never a ``RecursionError`` or ``ValueError`` from deep inside a parser.
"""

from __future__ import annotations

import bisect
import json
import math
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import orjson

from ..core.errors import InputError

MAX_INT_DIGITS = 4300  # Python's own limit on converting digits to an int


class TooLarge(float):
    """An integer literal of more than ``MAX_INT_DIGITS`` digits, parsed as infinity so
    the document still parses and the record holding it is the one reported."""


def _big_int(digits: str) -> int | float:
    if len(digits) - digits.startswith("-") > MAX_INT_DIGITS:
        return TooLarge("-inf" if digits.startswith("-") else "inf")
    return int(digits)


def parse_json(text: str | bytes) -> Any:
    """A JSON value; ValueError (with a clear reason) when it is not one."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as err:
        if str(err).startswith(("depth limit", "recursion limit")):
            raise ValueError(TOO_DEEP) from None  # json would recurse until it crashes
    try:
        return json.loads(text, parse_int=_big_int)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


TOO_DEEP = "nested more than 1024 levels deep"
STORED_DEPTH = 255  # levels a value kept as it is (ragreview's own format) may have


def too_deep_to_store(line: str, value: Any) -> bool:
    """True when ``value`` (parsed from ``line``) is nested deeper than ``STORED_DEPTH``:
    orjson cannot write it, and the standard library's writer would recurse until it
    crashes. Costs a string count unless the line has that many brackets at all."""
    if line.count("[") + line.count("{") <= STORED_DEPTH:
        return False
    try:
        orjson.dumps(value)
    except TypeError as err:
        return "recursion" in str(err).lower()
    return False


def non_finite(value: Any) -> tuple[str, str] | None:
    """(JSON path, reason) of the first NaN, Infinity, oversized integer or part nested
    too deep in ``value`` (only the fallback parse produces them: orjson rejects them)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str) and item == TOO_DEEP_MARK:
            return _short(where), TOO_DEEP
        if isinstance(item, float) and not math.isfinite(item):
            if isinstance(item, TooLarge):
                return where, f"integer of more than {MAX_INT_DIGITS} digits"
            return (
                where,
                "not a finite number (NaN, Infinity and out-of-range numbers are not JSON)",
            )
        if isinstance(item, dict):
            stack.extend(
                (f"{where}.{k}" if where else str(k), v) for k, v in reversed(item.items())
            )
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return None


def check_regular(path: Path) -> None:
    """InputError unless ``path`` is a regular file: a FIFO or a device would be read
    until it ends (maybe never), a directory cannot be."""
    try:
        mode = path.stat().st_mode
    except OSError as err:
        raise InputError(str(path), None, None, f"cannot read file: {err.strerror}") from None
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


def finite_only(value: Any) -> Any:
    """``value`` with every NaN, Infinity and oversized integer replaced by null, in
    place (iteratively: it may be nested 1024 deep). For the parts of a whole-file
    document kept to write it back: the records holding them were not imported, and
    what is written back must be standard JSON."""
    stack = [value]
    while stack:
        item = stack.pop()
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in list(pairs):
            if isinstance(child, float) and not math.isfinite(child) or child == TOO_DEEP_MARK:
                item[key] = None
            elif isinstance(child, (dict, list)):
                stack.append(child)
    return value


def _short(where: str) -> str:
    """A JSON path cut after a few levels (the part nested too deep is all ``[0]``)."""
    parts = re.findall(r"\[\d+\]|\.?[^.\[]+", where)
    return where if len(parts) <= 8 else "".join(parts[:8]) + "…"


def read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(str(path), None, None, f"cannot read file: {err.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise InputError(str(path), line, None, f"not UTF-8 text (byte {err.start})") from None
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
    for _number, line in _file_lines(path):
        if isinstance(line, str):
            return line
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


def iter_lines(
    path: Path, text: str | None = None, nan: bool = True
) -> Iterator[tuple[int, str, Any]]:
    """(line number, raw line, parsed value or InputError) for each non-empty line.

    Without ``text`` the file is streamed from disk, so memory stays flat however
    large it is. With ``nan=False`` a line holding NaN, Infinity or an oversized
    integer is an error naming that field.
    """
    report = _on_bytes.get()
    if text is not None:
        for number, line in _text_lines(text):
            if report is not None:
                report(len(line) + 1)  # characters: close enough to bytes for a bar
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                value = _parse_line(path, number, line, nan)
            yield number, line, value
        return
    for number, decoded, raw in _file_lines_raw(path, report):
        if isinstance(decoded, InputError):
            yield number, "", decoded
            continue
        try:
            value = orjson.loads(raw)  # the common case, from the bytes
        except orjson.JSONDecodeError:  # NaN, or an error to report: as from the text
            value = _parse_line(path, number, decoded, nan)
        yield number, decoded, value


def _parse_line(path: Path, number: int, line: str, nan: bool = True) -> Any:
    try:
        value = parse_json(line)
    except ValueError as err:
        return InputError(str(path), number, None, f"invalid JSON ({_reason(err)}{_column(err)})")
    found = None if nan else non_finite(value)  # (a walk: only where it matters)
    if found is not None:
        return InputError(str(path), number, found[0] or None, found[1])
    return value


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
                return parse_json(_cut_deep(text))
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


DEEP_LIMIT = 256  # levels kept of a document nested too deep for the parser
TOO_DEEP_MARK = "\0ragreview: nested too deep\0"  # (no JSON text can hold a raw NUL)


def _cut_deep(text: str) -> str:
    """``text`` with every container nested deeper than ``DEEP_LIMIT`` replaced by the
    string ``TOO_DEEP_MARK`` (``non_finite`` reports it), its newlines kept after it so
    lines stay where they were."""
    parts: list[str] = []
    depth, done, cut_at = 0, 0, -1
    for match in _TOKEN.finditer(text):
        char = match.group()[0]
        if char in "[{":
            depth += 1
            if depth == DEEP_LIMIT + 1:
                cut_at = match.start()
        elif char in "]}":
            if depth == DEEP_LIMIT + 1 and cut_at >= 0:
                parts.append(text[done:cut_at])
                parts.append(json.dumps(TOO_DEEP_MARK))
                parts.append("\n" * text.count("\n", cut_at, match.end()))
                done, cut_at = match.end(), -1
            depth -= 1
    parts.append(text[done:])
    return "".join(parts)


# Strings and structural characters: enough to follow a JSON path through the text.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]')
_PATH_PART = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def split_path(field: str) -> list[str | int]:
    """``a[2].b`` -> ``["a", 2, "b"]``."""
    return [int(i) if i else key for i, key in _PATH_PART.findall(field)]


class Locator:
    """Line numbers of the values of a whole-file JSON document, by JSON path, so a
    record's error in a pretty-printed file names a line as JSON Lines errors do.
    The text is scanned once, on the first question (only files with errors pay)."""

    MAX_DEPTH = 8  # deep enough for a SAFE statement's annotation

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts: dict[tuple[str | int, ...], int] | None = None
        self._newlines: list[int] = []

    def line(self, field: str | None) -> int | None:
        """The line of the value at ``field`` (or of its deepest part that exists)."""
        starts = self._index()
        parts = tuple(split_path(field or ""))
        for end in range(len(parts), -1, -1):
            offset = starts.get(parts[:end])
            if offset is not None:
                return bisect.bisect_left(self._newlines, offset) + 1
        return None

    def _index(self) -> dict[tuple[str | int, ...], int]:
        if self._starts is not None:
            return self._starts
        text = self._text
        self._newlines = [m.start() for m in re.finditer("\n", text)]
        starts: dict[tuple[str | int, ...], int] = {}
        path: list[str | int] = []  # the current value's path
        kinds: list[str] = []  # "[" or "{" per open container
        key: str | None = None
        first = re.search(r"\S", text)
        starts[()] = first.start() if first else 0

        def begin(at: int) -> None:
            if len(path) <= self.MAX_DEPTH:
                value = re.compile(r"\s*").match(text, at)
                starts.setdefault(tuple(path), value.end() if value else at)

        for match in _TOKEN.finditer(text):
            tok = match.group()
            char = tok[0]
            if char == '"':
                if kinds and kinds[-1] == "{" and key is None:
                    try:
                        key = json.loads(tok)
                    except ValueError:
                        key = tok
            elif char == ":" and key is not None:
                path.append(key)
                key = None
                begin(match.end())
            elif char == "[":
                kinds.append("[")
                path.append(0)
                begin(match.end())
            elif char == "{":
                kinds.append("{")
                key = None
            elif char == ",":
                if kinds and kinds[-1] == "[":
                    path[-1] = int(path[-1]) + 1
                    begin(match.end())
                elif kinds and path and kinds[-1] == "{":
                    path.pop()
                    key = None
            elif char in "]}" and kinds:
                opened = kinds.pop()
                if opened == "[" or (path and len(path) > len(kinds)):
                    path.pop()
        self._starts = starts
        return starts


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
