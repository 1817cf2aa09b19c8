"""``export --as parquet``: the dataset's rows as a parquet file (docs/formats.md).

The rows are those of the source format when it is a row format (RAGBench rows with
their overrides written in, exactly as ``--as source`` writes them), else ragreview's
own records; importing the parquet file gives the same records, labels and metrics.
They are written to a temporary JSON Lines file first (memory stays flat), then
converted by ``formats.parquet`` (two passes: the column types, then the rows).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..formats import native
from ..formats import parquet as parquet_rows
from ..formats.jsonio import parse_json
from . import export

if TYPE_CHECKING:
    import sqlite_utils


def _is_rows(path: Path) -> bool:
    """The first non-empty line of ``path`` is a JSON object on its own."""
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                try:
                    return isinstance(parse_json(line), dict)
                except ValueError:
                    return False
    return True


def write_file(
    db: sqlite_utils.Database,
    dataset: str,
    out: Path,
    *,
    reviewed_only: bool = False,
    allow_loss: bool = False,
    force: bool = False,
    protect: Iterable[str | Path] = (),
    on_record: Callable[[], None] | None = None,
) -> int:
    """Write ``dataset`` to the parquet file ``out`` atomically; the record count.
    Refuses, like ``--as source``, when the source rows would lose labels, and guards
    ``out`` like every export (``export.check_destination``)."""
    parquet_rows._pyarrow(out)  # one clear line before any work when pyarrow is missing
    export.check_destination(out, export.protected_paths(db, *protect), force)
    rows, rows_fd = export.temp_beside(out)
    os.close(rows_fd)
    tmp, tmp_fd = export.temp_beside(out)
    os.close(tmp_fd)
    try:
        for fmt in (export.resolve_format(db, dataset, "source"), native.NAME):
            with rows.open("w", encoding="utf-8", newline="") as fh:
                count = export.write(
                    db,
                    dataset,
                    fmt,
                    fh,
                    reviewed_only=reviewed_only,
                    allow_loss=allow_loss,
                    on_record=on_record,
                )
            if _is_rows(rows):
                break
            on_record = None  # counted once
        parquet_rows.write(rows, tmp)
        tmp.replace(out)
    finally:
        rows.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)
    return count
