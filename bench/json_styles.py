"""The three ways people write JSON Lines, for the benches that generate input (issue 27).

* ``json``: ``json.dumps`` with its defaults (``", "`` and ``": "`` separators,
  ``ensure_ascii``, NaN written as ``NaN``);
* ``pandas``: ``DataFrame.to_json(orient="records", lines=True)`` (escapes ``/``, NaN
  written as ``null``);
* ``orjson``: compact, UTF-8, NaN written as ``null``.

A bench writes its rows in each style and reports the worst figure.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

STYLES = ("json", "pandas", "orjson")
CHUNK = 5_000  # pandas rows per DataFrame: bounded memory at 300,000 records


def _chunks(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def write(path: Path, rows: Iterable[dict[str, Any]], style: str) -> None:
    """Write ``rows`` to ``path`` as JSON Lines in ``style`` (one of STYLES)."""
    with path.open("wb") as fh:
        if style == "orjson":
            for row in rows:
                fh.write(orjson.dumps(row) + b"\n")
        elif style == "json":
            for row in rows:
                fh.write(json.dumps(row).encode() + b"\n")
        elif style == "pandas":
            import pandas as pd

            for chunk in _chunks(rows):
                text = pd.DataFrame(chunk).to_json(orient="records", lines=True)
                fh.write(text.encode())
                if not text.endswith("\n"):
                    fh.write(b"\n")
        else:
            raise ValueError(f"unknown style {style!r}")


def write_all(
    folder: Path, stem: str, make_rows: Callable[[], Iterable[dict[str, Any]]]
) -> dict[str, Path]:
    """One file per style, ``folder/stem.STYLE.jsonl``, each from a fresh ``make_rows()``."""
    paths = {}
    for style in STYLES:
        paths[style] = folder / f"{stem}.{style}.jsonl"
        write(paths[style], make_rows(), style)
    return paths
