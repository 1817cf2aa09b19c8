"""What one import did (``ImportSummary``): the importer fills it in, the import
commands report it. Apart from ``store.records``: a label or mark call reads records
but never imports, and built this class at every start (issue 27)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import InputWarning


@dataclass
class ImportSummary:
    """What one import did, counted in records."""

    inserted: int = 0
    updated: int = 0
    stale: int = 0
    unchanged: int = 0
    # (id, first position, position) of records not stored because their id had come
    # earlier in the same import: the first is kept, never silently overwritten
    repeated: list[tuple[str, int, int]] = field(default_factory=list)
    # what the user must hear about although every record was imported (an id that
    # repeats in a source file, stored by record number)
    warnings: list[InputWarning] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.inserted + self.updated + self.unchanged
