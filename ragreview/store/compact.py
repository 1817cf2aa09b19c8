"""Reading the source lines of older imports, which stored a line without the texts its
canonical data already holds (imports now store the line compressed, whole:
``store.source_blob``; these DBs still open and export byte for byte).

Such a line was stored with those values cut out, and ``records.source_refs`` says
where each cut was, which data path fills it and the line's JSON style (orjson or
compact JSON, ``json.dumps`` with its spaced separators and ``\\u`` escapes, pandas'
``to_json`` with its ``\\/``): ``rebuild`` writes each value back in that style. A cut
was made only where the value, written in that style, was the line's text there, so
the line comes back byte for byte.

The oldest imports stored the row as JSON with the shared values set to null (a list
of refs); ``rebuild`` still reads those.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import orjson


def _orjson(value: Any) -> str:
    return orjson.dumps(value).decode()


# (encoder objects made once: json.dumps with any non-default option makes one a call;
# their ``encode`` writes a text straight through the C escaper. No check for circular
# references: a value parsed from JSON has none, and the check was a third of the
# encoder's time on a RAGBench row's sentence lists, which a source export of a
# json.dumps file encodes for every record. It does not change what is written.)
_spaced_ascii = json.JSONEncoder(check_circular=False).encode  # json.dumps' defaults
_spaced_utf8 = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
_compact_ascii = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


def _pandas(value: Any) -> str:  # pandas' to_json: compact, ASCII, "/" escaped
    return _compact_ascii(value).replace("/", "\\/")


# Style code (stored in the refs) -> how that style writes a value.
ENCODERS: dict[str, Callable[[Any], str]] = {
    "o": _orjson,
    "j": _spaced_ascii,
    "u": _spaced_utf8,
    "a": _compact_ascii,
    "p": _pandas,
}


@functools.lru_cache(maxsize=256)
def _parsed_refs(refs: str) -> tuple[str | None, tuple[tuple[Any, ...], ...]]:
    """(style, cuts) — style None for an older import's refs — parsed once per shape:
    the records of a file mostly share one, and parsing them was a fifth of a rebuild,
    which every source export does per record."""
    parsed = orjson.loads(refs)
    if type(parsed) is dict:
        return parsed["s"], tuple((at, _path(path), *joined) for at, path, *joined in parsed["c"])
    return None, tuple((tuple(at), tuple(path), *joined) for at, path, *joined in parsed)


def _path(path: list[Any]) -> tuple[Any, ...]:
    """A data path as a tuple; a cut of a whole list of shared values has a list of
    paths (its first item a list, where a path's is a field name)."""
    if path and type(path[0]) is list:
        return tuple(tuple(p) for p in path)
    return tuple(path)


def _value(data: Any, path: tuple[Any, ...], joiner: str | None) -> Any:
    if path and type(path[0]) is tuple:
        return [_value(data, p, joiner) for p in path]
    value = data
    for step in path:
        value = value[step]
    if joiner:  # the sentences' texts, joined
        value = joiner.join([pair[1] for pair in value])
    return value


def rebuild(rest: str, refs: str, data: Any) -> str:
    """The source text back from ``compact``'s parts and the record's data (its JSON
    text or the parsed object)."""
    if isinstance(data, str):
        try:
            data = orjson.loads(data)
        except orjson.JSONDecodeError:  # (an integer beyond 64 bits, outside the refs)
            data = json.loads(data)
    style, cuts = _parsed_refs(refs)
    if style is None:
        return _rebuild_row(rest, cuts, data)
    encode = ENCODERS[style]
    out: list[str] = []
    kept = 0
    for at, path, *joined in cuts:
        out.append(rest[kept:at])
        out.append(encode(_value(data, path, joined[0] if joined else None)))
        kept = at
    out.append(rest[kept:])
    return "".join(out)


def _rebuild_row(rest: str, cuts: tuple[tuple[Any, ...], ...], data: Any) -> str:
    """An older import's form: the row as compact JSON with the shared values null."""
    row = orjson.loads(rest)
    for (key, *index), path, *joined in cuts:
        value = _value(data, path, joined[0] if joined else None)
        if index:
            row[key][index[0]] = value
        else:
            row[key] = value
    return orjson.dumps(row).decode()
