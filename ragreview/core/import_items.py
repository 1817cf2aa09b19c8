"""What a format adapter yields for each line of an input file at import: the record
with its label layers (``ImportItem``), or a line a re-import found stored already
(``Unchanged``). Apart from ``core.record``: only an import needs these, and every
``ragreview label`` / ``mark`` call paid for building their classes at start (issue 27)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .record import Record


@dataclass(frozen=True)
class ImportItem:
    """One record read from an input file, with its label layers, ready to store."""

    position: int  # 1-based record number (line number for JSON Lines) in the file
    record: Record
    judge: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    human: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    source: str | None = None  # the original source record as JSON text, for export
    # labels the file gives per named reviewer (annotators of an evaluation platform),
    # each (reviewer, name, target, value, reason); stored as that reviewer's layer
    reviewers: tuple[tuple[str, str, str, Any, str | None], ...] = ()
    # the source is the record's own JSON text, read under the id it gives itself: its
    # ``line_hash`` is stored, and a re-import skips that line unparsed while unchanged
    own_source: bool = False
    # the parsed row ``source`` is the text of, where the adapter had one (metrics that
    # read the source row use it rather than parsing the text again)
    row: Any = field(default=None, compare=False, repr=False)
    # ``source`` as UTF-8 bytes where the reader had them (a line read from disk, a
    # parquet row's JSON text): hashed and compared as they are, not encoded again
    raw: bytes | None = field(default=None, compare=False, repr=False)
    # the file records a human decision on the whole record (a ragas annotation's
    # ``is_accepted``): a new record is stored as reviewed, its ``human`` layer being
    # what the human decided (a value equal to the judge's where they agreed)
    reviewed: bool = False
    # (label, target) of a ``human`` value -> the guideline rule it applies (ragreview's
    # own format: ``labels.rules``; docs/align.md)
    rules: Mapping[tuple[str, str], str] = field(default_factory=dict)


@dataclass(frozen=True)
class Unchanged:
    """A line a re-import found stored already, byte for byte and under the same id:
    not parsed, only its position may have moved (see ``formats.base.KnownLines``)."""

    position: int
    rowid: int
    id: str
    moved: bool  # its position differs from the stored one
