"""Reading JSON Lines and JSON files record by record, with line numbers.

Benchmarks write ``NaN`` (MT-RAG via pandas) which strict parsers reject: orjson is
tried first for speed, then the standard library, which accepts it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ..core.errors import InputError


def parse_json(text: str | bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def read_text(path: Path) -> str:
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
    for line in text.splitlines():
        if line.strip():
            try:
                parse_json(line)
            except ValueError:
                return False
            return True
    return False


def iter_lines(path: Path, text: str | None = None) -> Iterator[tuple[int, str, Any]]:
    """(line number, raw line, parsed value or InputError) for each non-empty line."""
    if text is None:
        text = read_text(path)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, line, parse_json(line)
        except ValueError as err:
            yield (
                number,
                line,
                InputError(str(path), number, None, f"invalid JSON ({_reason(err)}{_column(err)})"),
            )


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
