"""Untrusted text made safe to show: the one boundary between data and a terminal,
the TUI, a log line or a spreadsheet cell.

Record text, ids, reviewer names, notes and judge replies come from files and servers
we do not control. Written raw to a terminal, ``ESC [2J`` clears the screen, an OSC
sequence sets the window title or writes the clipboard (OSC 52); in a spreadsheet a
cell starting with ``=`` is a formula. ``printable`` removes every control character
and escape sequence; ``csv_cell`` also defuses formulas. JSON exports keep the text
exactly (JSON escapes control characters itself). See docs/safety.md.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

# Whole escape sequences first (so their parameters do not survive as text), then any
# control character left: C0 except tab and newline, DEL, and C1 (U+0080-U+009F). An
# 8-bit string introducer (U+009D OSC…) is removed alone, not with the text after it:
# C1 characters turn up in mis-decoded Windows-1252 text, where that text is real.
_UNSAFE = re.compile(
    r"""
      \x1b\[[0-?]*[ -/]*[@-~]?                  # CSI: ESC [ params intermediates final
    | \x9b[0-?]*[@-~]                           # CSI, 8-bit form (no intermediates)
    | \x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?  # OSC/DCS/SOS/PM/APC ... BEL or ST
    | \x1b[ -/]*[0-~]?                          # any other ESC sequence, or a lone ESC
    | [\x00-\x08\x0b-\x1f\x7f-\x9f]             # every other control character
    """,
    re.VERBOSE,
)
_LINE_BREAKS = re.compile(r"[\t\n]")

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def printable(text: Any, *, one_line: bool = False) -> str:
    """``text`` (``str()`` of it) without control characters or escape sequences.

    Tab and newline are kept, unless ``one_line``: then each becomes a space, for
    places that are one row on screen (a list row, a log line's fields)."""
    out = _UNSAFE.sub("", text if isinstance(text, str) else str(text))
    return _LINE_BREAKS.sub(" ", out) if one_line else out


def csv_cell(value: Any) -> Any:
    """A value for a CSV cell: text made ``printable`` and, when a spreadsheet would
    read it as a formula (it starts with = + - @, tab or CR), prefixed with ``'``
    (OWASP's advice). Numbers and None pass through unchanged."""
    if not isinstance(value, str):
        return value
    cleaned = printable(value)
    # checked before and after cleaning: CR is removed, and "\x1b=1" becomes "=1"
    if value.startswith(FORMULA_STARTS) or cleaned.startswith(FORMULA_STARTS):
        return "'" + cleaned
    return cleaned


def printable_all(value: Any) -> Any:
    """``printable`` applied to every string in nested dicts, lists, tuples and
    dataclasses (keys too): a report holding reviewer names and field values, made
    safe to print."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_all(k): printable_all(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(printable_all(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: printable_all(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.init
        }
        return dataclasses.replace(value, **changes)
    return value


_RAW_IN_JSON = re.compile(r"[\x7f-\x9f]")


# DEL and C1 controls as UTF-8 bytes (U+0080–U+009F are C2 80 – C2 9F)
_RAW_IN_JSON_BYTES = re.compile(rb"\x7f|\xc2[\x80-\x9f]")


def json_bytes_for_terminal(dumped: bytes) -> bytes:
    """``json_for_terminal`` on UTF-8 JSON (orjson's output), one regex pass over bytes
    (none when neither byte can start one: a scan for a byte is far cheaper)."""
    if b"\x7f" not in dumped and b"\xc2" not in dumped:
        return dumped
    return _RAW_IN_JSON_BYTES.sub(lambda m: b"\\u%04x" % ord(m.group().decode()), dumped)


def json_for_terminal(dumped: str) -> str:
    """A ``json.dumps(..., ensure_ascii=False)`` line made safe to print: JSON escapes
    C0 controls itself, but leaves DEL and C1 (8-bit CSI/OSC) raw; they become
    ``\\u009b`` escapes, so the parsed value is still exactly the original text."""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)
