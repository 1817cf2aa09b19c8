"""The docs name everything a user can reach: every review key in docs/tui.md, every
input format in docs/formats.md (every command in the README: test_readme_commands.py). Adding one without its
docs fails here (datasette's habit: docs tested against the code)."""

from __future__ import annotations

import re

import pytest

from ragreview import formats
from ragreview.core.families import FAMILIES
from ragreview.tui.actions import ACTIONS
from tests.conftest import REPO_ROOT


def _inline_code(path: str) -> set[str]:
    """The `code spans` of a Markdown file, fenced blocks left out (their backticks
    would pair across the block)."""
    text = (REPO_ROOT / path).read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return {span.strip() for span in re.findall(r"`([^`\n]+)`", text)}


def _keys(shown: str) -> list[str]:
    """``j/↓`` -> ``["j", "↓"]``; ``End/G`` -> ``["End", "G"]``; ``/`` stays ``/``."""
    return [shown] if shown == "/" else [k for k in shown.split("/") if k]


# How a key is written in docs/tui.md where the footer's glyph is not typed there.
SPELLED = {"⌫": "backspace", "␣": "space", "^z": "ctrl+z", "^y": "ctrl+y", "^e": "ctrl+e"}


@pytest.mark.parametrize("action", ACTIONS, ids=lambda a: a.id)
def test_every_review_action_is_in_the_tui_docs(action) -> None:
    spans = _inline_code("docs/tui.md")
    keys = _keys(action.shown)
    assert any(k in spans or SPELLED.get(k) in spans for k in keys), (
        f"docs/tui.md does not list the key of {action.id!r} ({action.shown})"
    )


FAMILY_KEYS = [(family.name, use) for family in FAMILIES for use in family.keys]


@pytest.mark.parametrize("family,use", FAMILY_KEYS, ids=lambda v: getattr(v, "action", v))
def test_every_family_key_is_in_the_tui_docs(family, use) -> None:
    assert use.key in _inline_code("docs/tui.md"), (
        f"docs/tui.md does not list {family}'s key {use.key!r} ({use.word})"
    )


@pytest.mark.parametrize("name", formats.names())
def test_every_format_is_in_the_formats_docs(name) -> None:
    assert name in _inline_code("docs/formats.md"), f"docs/formats.md does not name `{name}`"
