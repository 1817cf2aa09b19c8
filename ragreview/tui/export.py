"""``ctrl+e``: the dataset with its reviewed labels, in ragreview's own JSONL format."""

from __future__ import annotations

from pathlib import Path

import sqlite_utils

from .. import formats
from ..store import records as store_records
from ..store import settings as store_settings


def export_dataset(db: sqlite_utils.Database, dataset: str, out: Path) -> int:
    """Write every record of ``dataset`` to ``out`` (atomically: a temp file renamed)."""
    config = store_settings.get_all(db, dataset)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        count = formats.adapter("ragreview").write(store_records.iterate(db, dataset), fh, config)
    tmp.replace(out)
    return count
