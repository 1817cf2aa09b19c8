"""Line numbers of the values of a whole-file JSON document, found by JSON path, so a
record's error in a pretty-printed file names a line as JSON Lines errors do."""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

from .json_limits import (
    TOKEN,
    has_not_utf8,
    has_surrogate_escape,
    lone_surrogate,
    not_utf8,
)

_PATH_PART = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def split_path(field: str) -> list[str | int]:
    """``a[2].b`` -> ``["a", 2, "b"]``."""
    return [int(i) if i else key for i, key in _PATH_PART.findall(field)]


class Locator:
    """Line numbers of the values of a whole-file JSON document, by JSON path, so a
    record's error in a pretty-printed file names a line as JSON Lines errors do.
    The text is scanned once, on the first question (only files with errors pay)."""

    MAX_DEPTH = 8  # deep enough for a SAFE statement's annotation

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts: dict[tuple[str | int, ...], int] | None = None
        self._newlines: list[int] = []
        self._not_utf8: bool | None = None
        self._surrogate_escape: bool | None = None

    @property
    def not_utf8(self) -> bool:
        """True when the text holds a byte that is not UTF-8 (``json_limits``): then
        each record is searched for it."""
        if self._not_utf8 is None:
            self._not_utf8 = has_not_utf8(self._text)
        return self._not_utf8

    @property
    def may_hold_unstorable(self) -> bool:
        """True when the text holds a byte that is not UTF-8 or writes a surrogate as an
        escape: then each record is searched (``unstorable``)."""
        return self.not_utf8 or self._writes_surrogate

    @property
    def _writes_surrogate(self) -> bool:
        if self._surrogate_escape is None:
            self._surrogate_escape = has_surrogate_escape(self._text)
        return self._surrogate_escape

    def unstorable(self, value: Any) -> tuple[str, str] | None:
        """(JSON path, reason) of the first string or key in ``value`` that the store
        cannot hold: a byte that is not UTF-8 (``json_limits.not_utf8``) or a lone
        surrogate (``json_limits.lone_surrogate``), each searched only where the text
        may hold one; None when there is none."""
        found = not_utf8(value) if self.not_utf8 else None
        if found is None and self._writes_surrogate:
            found = lone_surrogate(value)
        return found

    def line(self, field: str | None) -> int | None:
        """The line of the value at ``field`` (or of its deepest part that exists)."""
        starts = self._index()
        parts = tuple(split_path(field or ""))
        for end in range(len(parts), -1, -1):
            offset = starts.get(parts[:end])
            if offset is not None:
                return bisect.bisect_left(self._newlines, offset) + 1
        return None

    def _index(self) -> dict[tuple[str | int, ...], int]:
        if self._starts is not None:
            return self._starts
        text = self._text
        self._newlines = [m.start() for m in re.finditer("\n", text)]
        starts: dict[tuple[str | int, ...], int] = {}
        path: list[str | int] = []  # the current value's path
        kinds: list[str] = []  # "[" or "{" per open container
        key: str | None = None
        first = re.search(r"\S", text)
        starts[()] = first.start() if first else 0

        def begin(at: int) -> None:
            if len(path) <= self.MAX_DEPTH:
                value = re.compile(r"\s*").match(text, at)
                starts.setdefault(tuple(path), value.end() if value else at)

        for match in TOKEN.finditer(text):
            tok = match.group()
            char = tok[0]
            if char == '"':
                if kinds and kinds[-1] == "{" and key is None:
                    try:
                        key = json.loads(tok)
                    except ValueError:
                        key = tok
            elif char == ":" and key is not None:
                path.append(key)
                key = None
                begin(match.end())
            elif char == "[":
                kinds.append("[")
                path.append(0)
                begin(match.end())
            elif char == "{":
                kinds.append("{")
                key = None
            elif char == ",":
                if kinds and kinds[-1] == "[":
                    path[-1] = int(path[-1]) + 1
                    begin(match.end())
                elif kinds and path and kinds[-1] == "{":
                    path.pop()
                    key = None
            elif char in "]}" and kinds:
                opened = kinds.pop()
                if opened == "[" or (path and len(path) > len(kinds)):
                    path.pop()
        self._starts = starts
        return starts
