"""One small adapter per source format, and detection by content (SPEC §7)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from ..core.errors import InputError
from ..core.record import ImportItem
from . import native
from .jsonio import is_json_lines, iter_lines, load_document, read_text

# Order matters for detection: the first adapter whose sniff() accepts wins, and the
# native format goes last because its markers (``labels``) are the most generic.
REGISTRY: dict[str, ModuleType] = {
    native.NAME: native,
}


def names() -> list[str]:
    return list(REGISTRY)


SNIFF_RECORDS = 10  # how many leading records detection looks at


def _candidates(path: Path, text: str) -> list[dict[str, Any]]:
    """The first few records (objects) of the file, for detection."""
    if is_json_lines(text):
        return _leading_objects(path, text)
    try:
        document = load_document(path, text)
    except InputError:
        # Not one JSON document either: JSON Lines whose first line is broken. Detect
        # from the good lines so the other records still import and the bad line is
        # reported where it is (not as a whole-file error at a wrong line).
        found = _leading_objects(path, text)
        if found:
            return found
        raise
    if isinstance(document, list):
        return [obj for obj in document[:SNIFF_RECORDS] if isinstance(obj, dict)]
    return [document] if isinstance(document, dict) else []


def _leading_objects(path: Path, text: str) -> list[dict[str, Any]]:
    found = []
    for _n, _line, obj in iter_lines(path, text):
        if isinstance(obj, dict):
            found.append(obj)
            if len(found) == SNIFF_RECORDS:
                break
    return found


def detect(path: Path, text: str | None = None) -> str:
    """The format of ``path``, from its first records.

    Several records are looked at, not only the first, so that one broken or
    incomplete leading record does not make the whole file unreadable.
    """
    if text is None:
        text = read_text(path)
    candidates = _candidates(path, text)
    for obj in candidates:
        for name, adapter in REGISTRY.items():
            if adapter.sniff(obj):
                return name
    if any("id" in obj for obj in candidates):
        return native.NAME
    raise InputError(
        str(path),
        1,
        None,
        f"cannot tell the format of this file; pass --format ({', '.join(REGISTRY)})",
    )


def read(path: Path, fmt: str | None = None) -> tuple[str, Iterator[ImportItem | InputError]]:
    """(format name, items and per-record errors in file order)."""
    text = read_text(path)
    if fmt is None:
        fmt = detect(path, text)
    elif fmt not in REGISTRY:
        raise InputError(
            str(path), None, None, f"unknown format {fmt!r} (known: {', '.join(REGISTRY)})"
        )
    return fmt, REGISTRY[fmt].read(path, text)


def adapter(fmt: str) -> ModuleType:
    return REGISTRY[fmt]
