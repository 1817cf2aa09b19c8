"""A stored record's label targets, read from its canonical JSON without building a Record.

``agreement`` counts label items over thousands of reviewed records and needs of each
only its task and the keys its labels may name (``Record.targets``). Validating and
building a whole ``Record`` (``parse_record``) was the largest part of the report's
time; the stored ``data`` was validated when it was stored, so the keys can be read
straight from it. ``RecordTargets.targets`` gives what ``Record.targets`` gives for
every record ``parse_record`` accepts (tests/core/test_record_targets.py holds the two
equal on every fixture record, for every target kind).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from operator import itemgetter
from typing import Any

from . import deepeval_items
from .keys import cell_key, context_key, part_key
from .record import CELL_KINDS

_KEYED = {  # target kind -> the record field whose entries' first element is the key
    "response": "response",
    "fact": "facts",
    "statement": "statements",
    "reference_statement": "reference_statements",
}


_first = itemgetter(0)

# Every target kind ``targets`` knows: what a record's stored targets hold
# (``stored_form``). A kind added to ``targets`` is added here too, and FORM raised.
KINDS = (
    "doc",
    "response",
    "record",
    "part",
    "fact",
    "statement",
    "reference_statement",
    "context",
    *deepeval_items.KINDS,
    *CELL_KINDS,
)
# The version of the stored form: stored targets of another version are read as
# missing (their records' targets are then read from their data), so raise it, with a
# migration that stores the reviewed records' targets again, whenever ``targets``
# gives a kind other keys than before.
FORM = 1


class RecordTargets:
    """``task`` and ``targets(kind)`` of a canonical record given as its parsed JSON."""

    __slots__ = ("data", "task")

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        self.task: str | None = data.get("task")

    def targets(self, kind: str) -> tuple[str, ...]:
        data = self.data
        if kind == "doc":  # (map and chain: the keys of a record's hundreds of sentences)
            sentences = (doc.get("sentences") or () for doc in data.get("documents") or ())
            return tuple(map(_first, chain.from_iterable(sentences)))
        field = _KEYED.get(kind)
        if field is not None:
            return tuple(map(_first, data.get(field) or ()))
        if kind == "record":
            return ("*",)
        if kind == "part":
            return tuple(part_key(i) for i in range(len(data.get("answer_parts") or ())))
        if kind == "context":
            return tuple(context_key(i) for i in range(len(data.get("documents") or ())))
        if kind in deepeval_items.KINDS:
            return deepeval_items.keys(data, kind)
        if kind in CELL_KINDS:  # claim x chunk (RAGChecker), claim by claim
            field = "statements" if kind == "statement_chunk" else "reference_statements"
            chunks = range(len(data.get("documents") or ()))
            return tuple(cell_key(e[0], c) for e in data.get(field) or () for c in chunks)
        raise ValueError(f"unknown target kind {kind!r}")


SEPARATOR = "\0"  # between a kind's targets in their stored form


def stored_form(data: Mapping[str, Any]) -> tuple[str | None, dict[str, str | tuple[str, ...]]]:
    """What ``StoredTargets`` is built from: the record's task and its targets of each
    kind in ``KINDS`` that it has any of (``store.target_rows`` keeps it as JSON), each
    kind's joined by ``SEPARATOR`` into one string (JSON reads one string several times
    faster than a list of short ones), or kept as the list where a target holds it."""
    lean = RecordTargets(data)
    by_kind: dict[str, str | tuple[str, ...]] = {}
    for kind in KINDS:
        got = lean.targets(kind)
        if got:
            joined = SEPARATOR.join(got)
            by_kind[kind] = got if joined.count(SEPARATOR) != len(got) - 1 else joined
    return lean.task, by_kind


class StoredTargets:
    """``task`` and ``targets(kind)`` of a record from its ``stored_form``: the same as
    ``RecordTargets``'s for every kind in ``KINDS``, without the record's data (its
    sentences' text is most of it)."""

    __slots__ = ("_by_kind", "task")

    def __init__(self, task: str | None, by_kind: Mapping[str, str | Sequence[str]]) -> None:
        self.task = task
        self._by_kind = by_kind

    def targets(self, kind: str) -> tuple[str, ...]:
        got = self._by_kind.get(kind)
        if got is not None:
            return tuple(got.split(SEPARATOR) if type(got) is str else got)
        if kind not in KINDS:
            raise ValueError(f"unknown target kind {kind!r}")
        return ()


# what `agreement` counts label items over besides a whole ``Record``
LeanTargets = RecordTargets | StoredTargets
