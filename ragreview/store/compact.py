"""One copy of each record's text: a source line stored as what its canonical data
does not already hold.

The adapters build a record's canonical data from its source row, putting the row's
own lists into it (a RAGBench row's documents and response sentences: most of its
bytes), and rows often also hold each document whole, the same sentences joined by
spaces. Such a source is stored as the row with those values left out (null) and, in
``records.source_refs``, where each is found in the data (``[row path, data path]``,
with a third item, the separator, for joined sentences); ``rebuild`` puts them back.
This is done only where the rebuilt text is the line byte for byte: a line written as
compact JSON (orjson's form, as ``export`` and the parquet reader write), no NaN, and a
row no adapter changed after parsing it. Any other source is stored whole (refs NULL).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import orjson

Path = list[str | int]


def compact(
    data: Mapping[str, Any],
    row: Any,
    source: str,
    raw: bytes | None = None,
    checked: bool = False,
) -> tuple[str, str] | None:
    """(the source without what ``data`` holds, the refs as JSON), or None when that
    would not give ``source`` back exactly (or would save nothing). ``raw``: the
    source's UTF-8 bytes, where the caller has them; ``checked``: the caller knows
    they are orjson's text of ``row`` as it is (then not written again to compare)."""
    if type(row) is not dict:
        return None
    shared = _lists(data)
    if not shared:
        return None
    joined = _joined(shared)
    rest: dict[str, Any] = {}
    refs: list[list[Any]] = []

    for key, value in row.items():
        kind = type(value)
        if kind is list:
            found = shared.get(id(value))
            if found is not None:
                refs.append([[key], found[0]])
                value = None
            elif value:  # a list of lists, or of texts: each may be in data
                first = type(value[0])
                if first is list:
                    value = [
                        _ref(item, shared, None, [key, i], refs) for i, item in enumerate(value)
                    ]
                elif first is str and len(value[0]) >= JOINED_MIN:
                    value = [
                        _ref(item, None, joined, [key, i], refs) for i, item in enumerate(value)
                    ]
        elif kind is str and len(value) >= JOINED_MIN:
            value = _ref(value, None, joined, [key], refs)
        rest[key] = value
    if not refs:
        return None
    try:
        # another writer's spacing, NaN, a change
        if not checked and orjson.dumps(row) != (source.encode() if raw is None else raw):
            return None
        return orjson.dumps(rest).decode(), orjson.dumps(refs).decode()
    except TypeError:  # (an integer beyond 64 bits)
        return None


JOINED_MIN = 64  # shorter texts are not worth a ref


def _ref(
    value: Any,
    shared: dict[int, tuple[Path, list[Any]]] | None,
    joined: dict[str, Path] | None,
    at: list[Any],
    refs: list[list[Any]],
) -> Any:
    """None, with its ref added, where ``value`` is a list of ``shared`` or a text of
    ``joined``; else ``value`` itself."""
    if shared is not None:
        found = shared.get(id(value))
        if found is not None:
            refs.append([at, found[0]])
            return None
    elif joined is not None and type(value) is str:
        path = joined.get(value)
        if path is not None:
            refs.append([at, path, " "])
            return None
    return value


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
def _parsed_refs(refs: str) -> tuple[tuple[Any, ...], ...]:
    """The refs as tuples, parsed once per shape: the records of a file mostly share one
    (RAGBench rows with five documents have the same twelve refs), and parsing them was
    a fifth of a rebuild, which every source export does per record."""
    return tuple((tuple(at), tuple(path), *joined) for at, path, *joined in orjson.loads(refs))


def rebuild(rest: str, refs: str, data: Any) -> str:
    """The source text back from ``compact``'s parts and the record's data (its JSON
    text or the parsed object)."""
    row = orjson.loads(rest)
    if isinstance(data, str):
        try:
            data = orjson.loads(data)
        except orjson.JSONDecodeError:  # (an integer beyond 64 bits, outside the refs)
            data = json.loads(data)
    for (key, *index), path, *joined in _parsed_refs(refs):
        value = data
        for step in path:
            value = value[step]
        if joined:  # the sentences' texts, joined
            value = joined[0].join([pair[1] for pair in value])
        if index:
            row[key][index[0]] = value
        else:
            row[key] = value
    return orjson.dumps(row).decode()
