"""The settings use case: show a dataset's settings, change one (the metrics it decides
are recomputed in the same transaction). ``ragreview settings`` calls these."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..store import metric_writes
from ..store import settings as store_settings

if TYPE_CHECKING:
    import sqlite_utils


def change(
    db: sqlite_utils.Database,
    dataset: str,
    name: str,
    value: Any,
    on_progress: Callable[[int], None] | None = None,
) -> bool:
    """Set ``name`` to ``value`` (checked against the setting's allowed values) and
    recompute what it decides; False when it already had that value."""
    return metric_writes.put_setting(db, dataset, name, value, on_progress=on_progress)


def current(db: sqlite_utils.Database, dataset: str) -> dict[str, Any]:
    """Every metric setting, then the other settings that were set (not metric
    variants: shown only once set)."""
    return {
        **store_settings.get_all(db, dataset),
        **{k: v for k, v in store_settings.others(db, dataset).items() if v is not None},
    }
