"""One copy of each record's text: a source line stored without the texts its canonical
data already holds, whatever JSON style wrote the line.

The adapters build a record's canonical data from its source row, putting the row's
own lists into it (a RAGBench row's documents and response sentences: most of its
bytes), and rows often also hold each document whole, the same sentences joined by
spaces. Such a line is stored with those values cut out, and ``records.source_refs``
says where each cut was and which data path fills it (``rebuild`` puts them back).

A cut is made only where the value, written in the line's own JSON style, is the
line's text at that place, so the line comes back byte for byte by construction, from
any writer: orjson or compact JSON, ``json.dumps`` with its spaced separators and
``\\u`` escapes, pandas' ``to_json`` with its ``\\/``. The style only decides how much
is cut: a value written otherwise (another writer's float or escape, a row an adapter
changed after parsing) is simply left in the line.

Older imports stored the row as JSON with the shared values set to null (a list of
refs); ``rebuild`` still reads those.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

import orjson

Path = list[str | int]

JOINED_MIN = 64  # shorter texts are not worth a cut
LIST_MIN = 16


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


def style_of(line: str) -> str:
    """The JSON style the line looks written in (a guess: it only decides what is cut).
    Cheap: ``isascii`` is a flag CPython keeps, and the scans look for one character
    (a two-character ``in`` took 30 us on a RAGBench line)."""
    colon = line.find('":')
    spaced = colon >= 0 and line[colon + 2 : colon + 3] == " "
    if not line.isascii():  # non-ASCII written as it is
        return "u" if spaced else "o"
    if spaced:
        return "j"
    slash = line.find("/")
    if slash > 0 and line[slash - 1] == "\\":
        return "p"  # pandas writes every "/" as \/
    # orjson's form and json's compact ASCII one write an ASCII text alike; they differ
    # where json escapes a non-ASCII character
    return "a" if _escapes_non_ascii(line) else "o"


def _escapes_non_ascii(line: str) -> bool:
    at = line.find("\\")
    while at >= 0:
        if line[at + 1 : at + 2] == "u" and line[at + 2 : at + 4] != "00":
            return True  # (\u00XX: a control character, which both escape, or Latin-1)
        if line[at + 1 : at + 4] == "u00" and line[at + 4 : at + 5] in "89abcdefABCDEF":
            return True
        at = line.find("\\", at + 2)
    return False


def compact(data: Mapping[str, Any], row: Any, source: str) -> tuple[str, str] | None:
    """(the line without what ``data`` holds, the refs as JSON), or None when nothing
    worth cutting was found. ``row`` is the parsed line (its lists the ones the adapter
    put into ``data``, where it did)."""
    if type(row) is not dict:
        return None
    shared = _lists(data)
    if not shared:
        return None
    joined = _joined(shared)
    style = style_of(source)
    encode = ENCODERS[style]
    pieces: list[str] = []
    cuts: list[list[Any]] = []
    state = [0, 0]  # [where the search goes on in source, characters kept so far]

    def cut(value: Any, path: Any, joiner: str | None) -> None:  # (a path, or a list of them)
        text = encode(value)
        if len(text) < LIST_MIN:
            return
        at = source.find(text, state[0])
        if at < 0:
            return
        pieces.append(source[state[0] : at])
        state[1] += at - state[0]
        cuts.append([state[1], path, joiner] if joiner else [state[1], path])
        state[0] = at + len(text)

    for value in row.values():
        kind = type(value)
        if kind is list:
            found = shared.get(id(value))
            if found is not None:
                cut(value, found[0], None)
            elif value:  # a list of lists, or of texts: each may be in data
                first = type(value[0])
                if first is list:
                    hits = [shared.get(id(item)) for item in value]
                    if None not in hits:  # all of them: one cut (a list of paths)
                        cut(value, [hit[0] for hit in hits if hit], None)
                    else:
                        for item, hit in zip(value, hits, strict=True):
                            if hit is not None:
                                cut(item, hit[0], None)
                elif first is str:
                    paths = [joined.get(item) if type(item) is str else None for item in value]
                    if None not in paths:
                        cut(value, paths, " ")
                    else:
                        for item in value:
                            _cut_joined(item, joined, cut)
        elif kind is str:
            _cut_joined(value, joined, cut)
    if not cuts:
        return None
    pieces.append(source[state[0] :])
    return "".join(pieces), orjson.dumps({"s": style, "c": cuts}).decode()


def _cut_joined(value: Any, joined: dict[str, Path], cut: Callable[..., None]) -> None:
    if type(value) is str and len(value) >= JOINED_MIN:
        path = joined.get(value)
        if path is not None:
            cut(value, path, " ")


# Data fields rewritten after import (a reviewer's item edits, store.item_edits; a
# judge run's facts, store.judge_store): the source must not follow them.
EDITED = frozenset({"facts", "statements", "reference_statements"})


def _lists(data: Mapping[str, Any]) -> dict[int, tuple[Path, list[Any]]]:
    """id -> (path, list) of the lists in ``data`` a source row may share: its fields'
    values, and the lists inside the objects of a list field (``documents[i].sentences``)."""
    out: dict[int, tuple[Path, list[Any]]] = {}
    for key, value in data.items():
        if type(value) is not list or key in EDITED:
            continue
        out.setdefault(id(value), ([key], value))
        for i, item in enumerate(value):
            if type(item) is dict:
                for name, inner in item.items():
                    if type(inner) is list:
                        out.setdefault(id(inner), ([key, i, name], inner))
    return out


def _joined(shared: dict[int, tuple[Path, list[Any]]]) -> dict[str, Path]:
    """The text each list of (key, text) sentences makes joined by spaces -> its path:
    a source often holds a document or response both whole and as sentences."""
    out: dict[str, Path] = {}
    for path, items in shared.values():
        if items and type(items[0]) is list and len(items[0]) == 2:
            try:
                out.setdefault(" ".join([pair[1] for pair in items]), path)
            except (TypeError, IndexError):
                continue
    return out


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
