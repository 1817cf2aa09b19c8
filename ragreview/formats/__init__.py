"""One small adapter per source format, and detection by content (docs/formats.md)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import InputError
from ..core.import_items import ImportItem, Unchanged
from . import catalogue, mapped, native
from .base import QUIET, Adapter, ReadContext
from .catalogue import REGISTRY  # re-exported: formats.REGISTRY
from .json_limits import not_utf8
from .jsonio import (
    array_document,
    check_regular,
    first_line,
    is_json_lines,
    iter_lines,
    load_document,
    parse_json,
    read_text,
)
from .locator import Locator


def names() -> list[str]:
    return list(REGISTRY)


SNIFF_RECORDS = 10  # how many leading records detection looks at


def _head(path: Path) -> tuple[list[dict[str, Any]], str | None]:
    """(the first few records, for detection; the file's text when it is one JSON
    document, None for JSON Lines, which are then streamed from disk)."""
    head = first_line(path)
    if head is None:
        text = read_text(path)  # raises the right error (empty, unreadable)
        if array_document(path, text) is None:  # no line is UTF-8: none tells the format
            raise next(e for _n, _l, e in iter_lines(path) if isinstance(e, InputError))
    else:
        try:
            value = parse_json(head)
        except ValueError:
            pass
        else:
            if not isinstance(value, list):  # (a list may be a one-line JSON array)
                return _leading_objects(path, None), None
    text = read_text(path)  # (bytes that are not UTF-8 are their records' errors)
    return _candidates(path, text), (None if _is_lines(path, text) else text)


def _is_lines(path: Path, text: str) -> bool:
    if array_document(path, text) is not None:
        return False
    if is_json_lines(text):
        return True
    try:
        load_document(path, text)
    except InputError:
        return True  # JSON Lines with a broken first line (see _candidates)
    return False


def _candidates(path: Path, text: str) -> list[dict[str, Any]]:
    """The first few records (objects) of the file, for detection."""
    records = array_document(path, text)
    if records is not None:
        return [obj for obj in records[:SNIFF_RECORDS] if isinstance(obj, dict)]
    if is_json_lines(text):
        return _leading_objects(path, text)
    try:
        document = load_document(path, text)
    except InputError:
        # Not one JSON document either: JSON Lines whose first line is broken. Detect
        # from the good lines so the other records still import and the bad line is
        # reported where it is (not as a whole-file error at a wrong line).
        # (a pretty-printed document's "{}" lines are no records: they do not count)
        found = [obj for obj in _leading_objects(path, text) if obj]
        if found:
            return found
        raise
    if isinstance(document, list):
        return [obj for obj in document[:SNIFF_RECORDS] if isinstance(obj, dict)]
    return [document] if isinstance(document, dict) else []


def _leading_objects(path: Path, text: str | None) -> list[dict[str, Any]]:
    found = []
    for _n, _line, obj in iter_lines(path, text):
        if isinstance(obj, dict):
            found.append(obj)
            if len(found) == SNIFF_RECORDS:
                break
    return found


def _detect(path: Path, candidates: list[dict[str, Any]]) -> str:
    for obj in candidates:
        for name, adapter in REGISTRY.items():
            if adapter.sniff(obj):
                return name
    if any("id" in obj for obj in candidates):
        return native.NAME
    detected = [name for name in REGISTRY if name != catalogue.MAPPED]
    raise InputError(str(path), 1, None, catalogue.no_match_message(candidates, detected))


def detect(path: Path, text: str | None = None) -> str:
    """The format of ``path``, from its first records.

    Several records are looked at, not only the first, so that one broken or
    incomplete leading record does not make the whole file unreadable.
    """
    if text is None:
        check_regular(path)
    candidates = _head(path)[0] if text is None else _candidates(path, text)
    return _detect(path, candidates)


@dataclass(frozen=True)
class Source:
    """An input file whose format is known (given, or detected from its first records):
    ``records(ctx)`` reads it. Detection and reading are apart so that a caller can
    refuse a file before it has what the reading needs (the DB the re-import's known
    lines come from, the progress bar)."""

    path: Path
    fmt: str
    text: str | None  # the file's text when it is one JSON document (read whole)
    mapping: dict[str, str] | None = None
    strict: bool = False

    def records(self, ctx: ReadContext = QUIET) -> Iterator[ImportItem | InputError | Unchanged]:
        """Items and per-record errors in file order. JSON Lines files are streamed
        from disk; whole-file JSON documents are read at once."""
        if self.mapping is not None:
            return mapped.read(self.path, self.text, ctx, self.mapping, self.strict)
        return REGISTRY[self.fmt].read(self.path, self.text, ctx)


def open_source(
    path: Path,
    fmt: str | None = None,
    mapping: dict[str, str] | None = None,
    strict: bool = False,
) -> Source:
    """``path`` with its format: ``fmt``, or detected. With ``mapping`` (``--map``) the
    rows are the user's own, read by ``mapped`` (``strict``: a mapped path that leads
    nowhere in a row is that row's error). InputError when the file cannot be read or
    its format not told (or does not fit ``fmt``)."""
    if mapping is not None:
        return Source(path, mapped.NAME, None, mapping, strict)
    if fmt is not None and fmt not in REGISTRY:
        raise InputError(
            str(path), None, None, f"unknown format {fmt!r} (known: {', '.join(REGISTRY)})"
        )
    check_regular(path)
    candidates, text = _head(path)
    if fmt is None:
        fmt = _detect(path, candidates)
    else:
        _check_forced(path, fmt, candidates)
    return Source(path, fmt, text)


def read(
    path: Path,
    fmt: str | None = None,
    mapping: dict[str, str] | None = None,
    strict: bool = False,
    ctx: ReadContext = QUIET,
) -> tuple[str, Iterator[ImportItem | InputError | Unchanged]]:
    """(format name, items and per-record errors in file order): ``open_source`` and
    its ``records(ctx)`` at once."""
    source = open_source(path, fmt, mapping, strict)
    return source.fmt, source.records(ctx)


def _check_forced(path: Path, fmt: str, candidates: list[dict[str, Any]]) -> None:
    """A format given with ``--format`` must fit the file: forced onto records that have
    none of its fields, it would import them with no labels at all. It fits when one of
    the first records has its markers (or, for ours, when detection would choose it)."""
    if any(REGISTRY[fmt].sniff(obj) for obj in candidates):
        return
    try:
        detected = _detect(path, candidates)
    except InputError:
        detected = None
    if detected == fmt or not candidates:  # (no record to judge by: the reader reports)
        return
    looks = f"; it looks like {detected}" if detected else ""
    raise InputError(  # (at line 1, as detection's own error)
        str(path),
        1,
        None,
        f"no record has the fields of the {fmt} format{looks} (see docs/formats.md)",
    )


def adapter(fmt: str) -> Adapter:
    return REGISTRY[fmt]


# A byte that is not UTF-8 in a kept document: raw, or as json.dumps escapes it.
_NOT_UTF8_KEPT = re.compile("[\udc80-\udcff]|\\\\u[dD][cC][89a-fA-F]")


def source_document(
    fmt: str, path: Path, text: str | None = None, mapping: dict[str, str] | None = None
) -> str | None:
    """What a whole-file format needs, besides its records, to write the file back
    (stored with the dataset at import and handed to ``write`` as
    ``settings["source.document"]``); None for line-per-record formats. A mapped
    file's is its mapping."""
    if mapping is not None:
        return mapped.mapping_document(mapping, path)
    make = REGISTRY[fmt].document
    document = None if make is None else make(path, text)
    if document is not None and _NOT_UTF8_KEPT.search(document):
        # a byte outside every record (an InspectorRAGet task, a ragas metric's name):
        # no record holds it, so the file is refused, at its line and field
        found = not_utf8(parse_json(document)) or ("", "not UTF-8 text")
        line = Locator(read_text(path)).line(found[0]) if found[0] else None
        raise InputError(str(path), line, found[0] or None, f"{found[1]}, outside the records")
    return document
