"""The one way record text (untrusted: documents, ids, judge replies) becomes Rich text.

A ``Text`` is never parsed as markup, so ``[bold red]`` shows as typed. Lines wrap by
display width and a word longer than the line (CJK runs, URLs) folds instead of being
cut with ``…``. Tabs and carriage returns from scraped pages become spaces and line
breaks so they cannot shift the columns, and every other control character or escape
sequence is removed (``core.safe_text``: ``ESC [2J`` would clear the screen).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from ..core.safe_text import printable

_LAYOUT = str.maketrans({"\t": " ", "\r": "\n", "\v": "\n", "\f": "\n"})


def clean(value: str) -> str:
    return printable(value.replace("\r\n", "\n").translate(_LAYOUT))


def literal(value: str, style: str | Style = "") -> Text:
    """``value`` as literal text, folding words too long for the line."""
    return Text(clean(value), style=style, overflow="fold")


def append(text: Text, value: str, style: str | Style = "") -> Text:
    """Append untrusted ``value`` to ``text`` literally."""
    text.append(clean(value), style)
    return text


def one_line(value: str) -> str:
    """For ids in one-line places (list rows, header): no line breaks or controls."""
    return "".join(ch if ch.isprintable() else " " for ch in printable(value, one_line=True))
