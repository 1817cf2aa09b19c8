"""Reviewer names typed by people we do not control (the ``serve`` sign-in page)."""

from __future__ import annotations

import unicodedata

MAX_REVIEWER_LENGTH = 64


def clean_reviewer(text: str) -> str:
    """The name as stored in the history: control and format characters dropped (no
    escape sequence can reach a terminal that shows the log), runs of whitespace made
    one space, at most ``MAX_REVIEWER_LENGTH`` characters. Empty when nothing is left."""
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if ch.isspace() or not unicodedata.category(ch).startswith("C")
    )
    return " ".join(kept.split())[:MAX_REVIEWER_LENGTH].strip()
