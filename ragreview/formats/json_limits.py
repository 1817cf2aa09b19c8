"""Limits on hostile JSON: nesting depth, integer size, NaN and Infinity.

A value nested deeper than orjson's limit (1024) or an integer of more than
``MAX_INT_DIGITS`` digits must be an error at its record, never a ``RecursionError`` or
``ValueError`` from inside a parser; NaN and Infinity are not JSON. Here is how each is
parsed so that the document still parses (``big_int``, ``cut_deep``), found in a parsed
value (``non_finite``) and kept out of what is written back (``finite_only``).

A byte that is not UTF-8 is the same kind of problem: the file is decoded with
``surrogateescape`` (each such byte a lone surrogate U+DC80..U+DCFF) so that the
document still parses, and the record whose string or key holds one is reported
(``not_utf8``). Nothing is replaced: such a string never reaches the store.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import orjson

_JSON_NAN = json.loads("NaN")  # (the one object json gives every NaN)

MAX_INT_DIGITS = 4300  # Python's own limit on converting digits to an int


class TooLarge(float):
    """An integer literal of more than ``MAX_INT_DIGITS`` digits, parsed as infinity so
    the document still parses and the record holding it is the one reported."""


def big_int(digits: str) -> int | float:
    if len(digits) - digits.startswith("-") > MAX_INT_DIGITS:
        return TooLarge("-inf" if digits.startswith("-") else "inf")
    return int(digits)


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


_NAN_MARK = b'"\\u0000"'  # a JSON string no line holds unless it writes "\u0000"
_NAN_GROWTH = len(_NAN_MARK) - len(b"NaN")
# every digit to "0", anything else to a space: a run of 19 digits is then a plain
# search (a regex for it cost ten times the parse)
_DIGITS_TO_ZERO = bytes(48 if 48 <= c <= 57 else 32 for c in range(256))
_LONG_DIGITS = b"0" * 19


def loads_nan_fields(raw: bytes) -> Any:
    """The object a JSON line holding ``NaN`` field values parses to (each NaN as
    ``json``'s), by orjson, or None when the line is not such a line (orjson alone
    parses one without NaN, ``json.loads`` any other). pandas' ``to_json`` writes a missing cell as a bare ``NaN``: an
    MT-RAG row has a few, and ``json``'s parser took three times orjson's time.

    Every ``NaN`` in the bytes becomes the string ``"\\u0000"``, which orjson parses only
    where each ``NaN`` stood for a value: one inside a string would end that string
    and leave a backslash outside, which no JSON text has. So when orjson parses the
    result, an object's field that is that one-character string was a NaN, provided the
    line wrote no ``\\u0000`` itself and every mark is such a field (a NaN nested
    deeper: None, the slow path). Also None where the line has 19 digits in a row:
    orjson makes a float of an integer beyond 64 bits, json an int."""
    marked = raw.replace(b"NaN", _NAN_MARK)
    # (a line without NaN comes back as long as it was: no search for one first)
    if len(marked) == len(raw):
        return None
    if b"\\u0000" in raw or _LONG_DIGITS in raw.translate(_DIGITS_TO_ZERO):
        return None
    try:
        row = orjson.loads(marked)
    except orjson.JSONDecodeError:
        return None
    if type(row) is not dict:
        return None
    fields = [key for key, value in row.items() if value == "\0"]
    # (the NaNs replaced, from the lengths: each made the line _NAN_GROWTH longer; a
    # count of them was a second scan of the line)
    if len(fields) * _NAN_GROWTH != len(marked) - len(raw):
        return None
    for key in fields:
        row[key] = _JSON_NAN
    return row


def non_finite(value: Any) -> tuple[str, str] | None:
    """(JSON path, reason) of the first NaN, Infinity, oversized integer or part nested
    too deep in ``value`` (only the fallback parse produces them: orjson rejects them)."""
    if not _has_non_finite(value):  # the common case, without building a path per value
        return None
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


def _has_non_finite(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif (isinstance(item, float) and not math.isfinite(item)) or item == TOO_DEEP_MARK:
            return True
    return False


def finite_only(value: Any) -> Any:
    """``value`` with every NaN, Infinity, oversized integer and string that is not
    UTF-8 replaced by null (a key that is not UTF-8: by its ``shown`` text), in place
    (iteratively: it may be nested 1024 deep). For the parts of a whole-file document
    kept to write it back: the records holding them were not imported, and what is
    written back must be standard JSON (and what is stored, UTF-8)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in [k for k in item if isinstance(k, str) and has_not_utf8(k)]:
                item[shown(key)] = item.pop(key)
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in list(pairs):
            if isinstance(child, float) and not math.isfinite(child) or child == TOO_DEEP_MARK:
                item[key] = None
            elif isinstance(child, str) and has_not_utf8(child):
                item[key] = None
            elif isinstance(child, (dict, list)):
                stack.append(child)
    return value


_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # a byte decoded with surrogateescape


def has_not_utf8(text: str) -> bool:
    """True when ``text`` (decoded with ``surrogateescape``) held a byte that is not
    UTF-8. (A JSON escape such as ``\\udcff`` is ASCII text: never matched.)"""
    return _NOT_UTF8.search(text) is not None


def shown(text: str) -> str:
    """``text`` with each byte that is not UTF-8 written as ``\\xff``: printable, storable."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def not_utf8(value: Any) -> tuple[str, str] | None:
    """(JSON path, reason) of the first string or key in ``value`` that holds a byte
    that is not UTF-8 (see the module's doc); None when there is none. A walk: only for
    documents whose text has such a byte (``has_not_utf8``)."""
    return _first_match(value, _NOT_UTF8, _bad_byte)


# \ud800..\udfff written as a JSON escape, and such a character once parsed
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogate_escape(text: str) -> bool:
    """True when ``text`` writes a surrogate as a JSON escape (``"\\ud800"``): then
    its values are searched for a lone one (``lone_surrogate``)."""
    return _SURROGATE_ESCAPE.search(text) is not None


def lone_surrogate(value: Any) -> tuple[str, str] | None:
    """(JSON path, reason) of the first string or key in ``value`` holding a lone
    surrogate, written as an escape of half a UTF-16 pair: orjson refuses such a text,
    and json's fallback parse makes a str of it that cannot be written as UTF-8 (the
    store, an export). None when there is none (an escaped pair is one character). A
    walk: only for texts that ``has_surrogate_escape``."""
    return _first_match(value, _SURROGATE, _lone)


def _lone(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"lone surrogate \\u{code:04x} at character {found.start() + 1} (not Unicode text)"


def _first_match(
    value: Any, pattern: re.Pattern[str], reason: Callable[[re.Match[str]], str]
) -> tuple[str, str] | None:
    """(JSON path, ``reason(match)``) of the first string or key in ``value`` where
    ``pattern`` matches; None when it matches none."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if (found := pattern.search(item)) is not None:
                return where, reason(found)
        elif isinstance(item, dict):
            for key in item:
                if isinstance(key, str) and (found := pattern.search(key)) is not None:
                    shown_key = _printable(key)
                    return (f"{where}.{shown_key}" if where else shown_key), reason(found)
            stack.extend(
                (f"{where}.{k}" if where else str(k), v) for k, v in reversed(item.items())
            )
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return None


def _printable(key: str) -> str:
    """A key as a message can hold it: a byte that is not UTF-8 as ``\\xff``, any other
    surrogate as its escape."""
    return "".join(
        shown(c) if "\udc80" <= c <= "\udcff" else c.encode("utf-8", "backslashreplace").decode()
        for c in key
    )


def _bad_byte(found: re.Match[str]) -> str:
    byte = ord(found.group()) - 0xDC00
    return f"not UTF-8 text (byte 0x{byte:02x} at character {found.start() + 1})"


def _short(where: str) -> str:
    """A JSON path cut after a few levels (the part nested too deep is all ``[0]``)."""
    parts = re.findall(r"\[\d+\]|\.?[^.\[]+", where)
    return where if len(parts) <= 8 else "".join(parts[:8]) + "…"


DEEP_LIMIT = 256  # levels kept of a document nested too deep for the parser
TOO_DEEP_MARK = "\0ragreview: nested too deep\0"  # (no JSON text can hold a raw NUL)


def cut_deep(text: str) -> str:
    """``text`` with every container nested deeper than ``DEEP_LIMIT`` replaced by the
    string ``TOO_DEEP_MARK`` (``non_finite`` reports it), its newlines kept after it so
    lines stay where they were."""
    parts: list[str] = []
    depth, done, cut_at = 0, 0, -1
    for match in TOKEN.finditer(text):
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
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]')
