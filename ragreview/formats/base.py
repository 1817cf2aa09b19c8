"""What every format adapter provides, and what the writers are given."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, TextIO

from ..core.errors import InputError
from ..core.record import ImportItem, Record, Unchanged


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


class Adapter(Protocol):
    NAME: str

    def sniff(self, obj: dict[str, Any]) -> bool: ...

    def read(
        self, path: Path, text: str | None = None
    ) -> Iterator[ImportItem | InputError | Unchanged]: ...

    def write(
        self, items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]
    ) -> int: ...

    # A source format also provides ``read_back(item, settings) -> labels``: the effective
    # labels a re-import of ``item`` as ``write`` writes it gives. The export compares
    # them with the record's to refuse rather than drop a label (services/export.py).
    # ragreview's own format holds every label and has none.
