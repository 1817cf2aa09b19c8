"""The merge use case: several reviewers' DBs of the same dataset combined into a new
one (``store.merge``), with the per-dataset agreement between the reviewers.
``ragreview merge`` calls this."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import RagreviewError
from ..store import merge as store_merge
from ..store import open_database


@dataclass
class Merged:
    summary: store_merge.MergeSummary
    agreement: dict[str, Any]  # dataset -> store.merge.human_agreement


def merge(paths: Sequence[str | Path], into: str | Path) -> Merged:
    """Merge the review DBs ``paths`` into the new DB ``into`` (never one of them)."""
    if Path(into).resolve() in {Path(p).resolve() for p in paths}:
        raise RagreviewError("--into must be a new file, not one of the inputs")
    database = open_database(into)
    try:
        summary = store_merge.merge(database, [str(p) for p in paths])
        agreement = {name: store_merge.human_agreement(database, name) for name in summary.datasets}
    finally:
        database.conn.close()
    return Merged(summary, agreement)
