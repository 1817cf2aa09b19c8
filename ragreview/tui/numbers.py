"""The numbers the review screen shows after a change, read once per keystroke: the
open record's metric values, the dataset's (the running sums, no rescan), the corrected
estimate from the latest review draw, and the review progress."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..services import estimates as estimate_blocks
from ..store import browse, metric_reads, metric_summary_reads

if TYPE_CHECKING:  # sqlite_utils imports click; the model needs no CLI
    import sqlite_utils


@dataclass(frozen=True)
class Numbers:
    """The counts, estimates and metric values the screen shows after a change."""

    reviewed: int
    total: int
    estimates: dict[str, Any]  # the ``estimate`` block (services.estimates)
    record: dict[str, dict[str, float | None]] | None = None  # {layer: {metric: value}}
    dataset: dict[str, Any] | None = None  # metric_summary_reads.dataset_summary

    @property
    def drawn_estimates(self) -> dict[str, Any] | None:
        """Per metric its estimate, where a review draw exists (else None)."""
        return self.estimates["metrics"] if self.estimates["draw"] is not None else None


class NumberReader:
    """Reads ``Numbers`` for one dataset whose metric rows exist (``metric_writes.ensure``)
    with the settings the review read when it opened."""

    def __init__(self, db: sqlite_utils.Database, dataset: str, settings: dict[str, Any]) -> None:
        self.db, self.dataset, self.settings = db, dataset, settings
        self._total: int | None = None

    def read(self, rowid: int | None, *, metrics: bool, estimates: bool = True) -> Numbers:
        """With ``metrics``, the record ``rowid``'s and the dataset's metric values too
        (the dataset summary's reviewed count serves the estimate and the header).
        Without ``estimates``, the block says no draw (the first screen reads the draw
        after its first frame: its members' statuses and values)."""
        db, dataset = self.db, self.dataset
        record = summary = None
        if metrics:
            summary = metric_summary_reads.dataset_summary(
                db, dataset, known_settings=self.settings
            )
            reviewed = summary["reviewed_records"]
            if rowid is not None:
                record = metric_reads.record_values(db, rowid)
        else:
            reviewed = browse.reviewed_count(db, dataset)
        block = (
            estimate_blocks.estimate_block(
                db, dataset, self.settings, reviewed, records=self.total()
            )
            if estimates
            else {"draw": None, "metrics": {}, "warnings": []}
        )
        return Numbers(reviewed, self.total(), block, record, summary)

    def total(self) -> int:
        """The record count; it only changes on import, so it is counted once."""
        if self._total is None:
            self._total = browse.total_count(self.db, self.dataset)
        return self._total
