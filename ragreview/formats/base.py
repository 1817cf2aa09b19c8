"""What every format adapter declares and provides, and what readers and writers are
given. A format is one module of ``formats/`` that satisfies ``Adapter`` (mypy checks
each one: ``catalogue.ADAPTERS``), registered by being listed in ``catalogue.ADAPTERS``;
docs/contributing.md has the recipe."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TextIO

from ..core.errors import InputError
from ..core.import_items import ImportItem, Unchanged
from ..core.record import Record, line_hash


class ExportRecord(Protocol):
    """A stored record as the writers see it (``store.records.StoredRecord`` fits)."""

    @property
    def record(self) -> Record: ...
    @property
    def judge(self) -> Mapping[str, Mapping[str, Any]]: ...
    @property
    def human(self) -> Mapping[str, Mapping[str, Any]]: ...
    @property
    def source(self) -> str | None: ...


@dataclass(frozen=True)
class Listing:
    """How ``ragreview formats`` lists a format, and what a file no format accepts is
    told it misses (``catalogue.closest``). ``field_sets`` summarise ``sniff`` for
    people: a record fits when it has every field of one set (``sniff`` may look closer,
    at types and nesting)."""

    detected_by: str
    field_sets: tuple[tuple[str, ...], ...]
    reads: str


@dataclass(frozen=True)
class Traits:
    """What the rest of ragreview asks of a format, instead of testing its name."""

    # the writer is told who made each override (``settings["export.authors"]``)
    needs_authors: bool = False
    # the writer is told the reviewers' reasons (``settings["export.reasons"]``)
    needs_reasons: bool = False
    # the writer is told the guideline rule each override applies (``settings["export.rules"]``
    # and the rules' texts, ``settings["export.rule_texts"]``)
    needs_rules: bool = False
    # a record may declare human metrics (a ``rubric``): the agreement report reads
    # every record's data for them; False lets it skip that read
    may_declare_rubric: bool = True
    # each row is a record of its own, nothing read across rows: two worker processes
    # may convert a parquet file's record batches between them (import_pipeline)
    rows_stand_alone: bool = False
    # the writer is ``line_writer.write_lines``' alone, whatever the dataset: a record whose
    # labels nobody changed is its source line and a line break, and no line depends
    # on another record; the export then writes records nobody overrode from their
    # stored source alone (services/export.py, ``store.source_lines``)
    source_lines: bool = False
    # the file holds every label, edited facts and statements, and who reviewed it
    # (ragreview's own records): nothing to refuse, a gold set keeps its metadata
    holds_everything: bool = False


# ``read_back(item, settings) -> labels``: the effective labels a re-import of ``item`` as
# ``write`` writes it gives. The export compares them with the record's, to refuse
# rather than drop a label (services/export.py).
ReadBack = Callable[[ExportRecord, Mapping[str, Any]], dict[str, dict[str, Any]]]
# ``document(path, text) -> str | None``: what a whole-file format needs, besides its
# records, to write the file back (stored with the dataset, handed to ``write`` as
# ``settings["source.document"]``).
Document = Callable[[Path, str | None], str | None]


class KnownLines:
    """The lines a re-import may leave unparsed: ``line_hash`` -> (rowid, id, position)
    of each stored record whose source is that line, read under its own id.

    A line is skipped only once the file's ids are counted (``ReadContext.ids_counted``)
    and its id is unique in the file: then the same bytes give the same record under the
    same id, and only its position may have moved.
    """

    def __init__(self, lines: dict[bytes, tuple[int, str, int]]) -> None:
        self.lines = lines
        self.ids: Mapping[str, int] | None = None

    def unchanged(self, raw: bytes, number: int) -> Unchanged | None:
        if self.ids is None:
            return None
        found = self.lines.get(line_hash(raw))
        if found is None or self.ids.get(found[1]) != 1:
            return None
        return Unchanged(number, found[0], found[1], number != found[2])


class Share(NamedTuple):
    """``n`` processes convert a parquet file's record batches between them: this one
    gives the rows of every ``n``-th batch from the ``k``-th (0-based), a ``Skipped``
    for each other batch, and calls ``done(index)`` once the last row of a batch it gave
    has been taken (``parquet.rows``, ``services.import_pipeline``)."""

    k: int
    n: int
    done: Callable[[int], None]


@dataclass(frozen=True)
class ReadContext:
    """Everything a reader is given besides the file. The default reads quietly, every
    line parsed, every row converted."""

    # told how many bytes each line (or parquet row) read took, for the progress bar
    on_bytes: Callable[[int], None] | None = None
    # a re-import into the same dataset: the lines stored before, left unparsed
    known: KnownLines | None = None
    # this process's part of a parquet file shared between workers
    share: Share | None = None

    def ids_counted(self, ids: Mapping[str, int] | None) -> None:
        """The ids of the file being read, counted: known lines may be skipped now."""
        if self.known is not None:
            self.known.ids = ids


QUIET = ReadContext()

Entries = Iterator[ImportItem | InputError | Unchanged]


class Adapter(Protocol):
    """A format: every member is declared by each adapter module (``None`` where a
    format has no such part), so nothing about a format is found by name elsewhere."""

    @property
    def NAME(self) -> str: ...
    @property
    def LISTING(self) -> Listing: ...
    @property
    def TRAITS(self) -> Traits: ...

    def sniff(self, obj: dict[str, Any]) -> bool:
        """Whether a record (one of the file's first) is of this format."""
        ...

    def read(self, path: Path, text: str | None = None, ctx: ReadContext = QUIET) -> Entries:
        """The file's records and per-record errors, in file order. ``text``: the
        file's text when detection read it whole (one JSON document), else None."""
        ...

    def write(
        self, items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]
    ) -> int: ...

    @property
    def read_back(self) -> ReadBack | None:
        """None: the format holds every label (ragreview's own)."""
        ...

    @property
    def document(self) -> Document | None:
        """None: a line-per-record format, each record's source line is all it needs."""
        ...
