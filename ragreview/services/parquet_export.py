"""``export --as parquet``: the dataset's rows as a parquet file (docs/formats.md).

The rows are those of the source format when it is a row format (RAGBench rows with
their overrides written in, exactly as ``--as source`` writes them), else ragreview's
own records; importing the parquet file gives the same records, labels and metrics.
They are written to a temporary JSON Lines file first (memory stays flat), then
converted by ``formats.parquet`` (two passes: the column types, then the rows).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..formats import native
from ..formats import parquet as parquet_rows
from ..formats.jsonio import parse_json
from . import output_file

if TYPE_CHECKING:
    import sqlite_utils

Writer = Callable[..., int]  # export._write, passed in: only export.export calls this module


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


def check_available(out: Path) -> None:
    """One clear line, before any work, when pyarrow is missing."""
    parquet_rows._pyarrow(out)


def write_rows(
    db: sqlite_utils.Database,
    dataset: str,
    out: Path,
    write: Writer,
    source_format: str,
    *,
    reviewed_only: bool = False,
    allow_loss: bool = False,
    on_record: Callable[[], None] | None = None,
) -> int:
    """Write ``dataset`` as parquet to ``out`` (the temporary file of
    ``export.export``, which guards the real output); the record count. ``write`` is the
    export's stream writer, ``source_format`` the dataset's format. Refuses, like
    ``--as source``, when the source rows would lose labels."""
    with output_file.scratch_beside(out) as rows:
        for fmt in (source_format, native.NAME):
            with rows.open("w", encoding="utf-8", newline="") as fh:
                count = write(
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
        parquet_rows.write(rows, out)
    return count
