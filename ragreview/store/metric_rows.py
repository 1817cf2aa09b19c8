"""Per-record metric rows and dataset aggregates kept in the DB.

Filled in by the metrics work: ``refresh`` recomputes the given records' metrics (judge
and effective layers) inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils


def refresh(db: sqlite_utils.Database, rowids: Iterable[int]) -> None:
    """Recompute stored metrics for these records (no metrics are stored yet)."""
    return None
