"""One small adapter per source format, and detection by content (SPEC §7)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from ..core.errors import InputError
from ..core.record import ImportItem
from . import factscore, mtrag, native, ragas, ragbench, rgb, safe
from .jsonio import first_line, is_json_lines, iter_lines, load_document, parse_json, read_text

# Order matters for detection: the first adapter whose sniff() accepts wins, and the
# native format goes last because its markers (``labels``) are the most generic.
REGISTRY: dict[str, ModuleType] = {
    m.NAME: m for m in (ragbench, rgb, mtrag, factscore, safe, ragas, native)
}
# Export targets that are not source formats (no reader).
EXPORT_ONLY = ("csv",)


def names() -> list[str]:
    return list(REGISTRY)


def _first_object(path: Path, text: str | None) -> tuple[Any, bool]:
    """(the first record or the whole document, whether the file is JSON Lines)."""
    if text is None:
        head = first_line(path)
        if head is None:
            read_text(path)  # raises the right error (empty, unreadable, not UTF-8)
        else:
            try:
                return parse_json(head), True
            except ValueError:
                pass
        text = read_text(path)
    if is_json_lines(text):
        for _n, _line, obj in iter_lines(path, text):
            return obj, True
    return load_document(path, text), False


def _detect(path: Path, first: Any) -> str:
    candidates = first if isinstance(first, dict) else None
    if isinstance(first, list) and first and isinstance(first[0], dict):
        candidates = first[0]
    if candidates is not None:
        for name, adapter in REGISTRY.items():
            if adapter.sniff(candidates):
                return name
        if "id" in candidates:
            return native.NAME
    raise InputError(
        str(path),
        1,
        None,
        f"cannot tell the format of this file; pass --format ({', '.join(REGISTRY)})",
    )


def detect(path: Path, text: str | None = None) -> str:
    """The format of ``path``, from its first record."""
    first, _lines = _first_object(path, text)
    return _detect(path, first)


def read(path: Path, fmt: str | None = None) -> tuple[str, Iterator[ImportItem | InputError]]:
    """(format name, items and per-record errors in file order). JSON Lines files are
    streamed from disk; whole-file JSON documents are read at once."""
    if fmt is not None and fmt not in REGISTRY:
        raise InputError(
            str(path), None, None, f"unknown format {fmt!r} (known: {', '.join(REGISTRY)})"
        )
    first, lines = _first_object(path, None)
    if fmt is None:
        fmt = _detect(path, first)
    return fmt, REGISTRY[fmt].read(path, None if lines else read_text(path))


def adapter(fmt: str) -> ModuleType:
    return REGISTRY[fmt]


def source_document(fmt: str, path: Path, text: str | None = None) -> str | None:
    """What a whole-file format needs, besides its records, to write the file back
    (stored with the dataset at import and handed to ``write`` as
    ``settings["source.document"]``); None for line-per-record formats."""
    make = getattr(REGISTRY[fmt], "document", None)
    return None if make is None else make(path, text)
