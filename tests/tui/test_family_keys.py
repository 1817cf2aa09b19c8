"""A label key's letter is written once, in the families' declarations
(``KeyUse.key`` in ragreview/families/): the bindings, footer and help read it from
there (``tui.actions``), and no letter means two things in one family."""

from __future__ import annotations

from ragreview.core.families import FAMILIES
from ragreview.tui.actions import ACTIONS, BY_ID, bindings, family_key


def _typed(keys: str) -> set[str]:
    return set(keys.split(","))


def test_every_label_binding_is_the_letter_its_families_declare() -> None:
    for action in ACTIONS:
        if not action.is_label:
            continue
        letter = family_key(action.id)  # raises when two families disagree
        assert action.shown == letter, action.id
        assert action.keys.split(",")[0] in (letter, {"+": "plus", "-": "minus"}.get(letter))


def test_every_family_key_is_bound_to_its_action() -> None:
    for family in FAMILIES:
        for use in family.keys:
            action = BY_ID[use.action]
            assert action.is_label and action.shown == use.key, (family.name, use.action)


def test_no_two_actions_of_one_family_share_a_letter() -> None:
    for family in FAMILIES:
        action_of: dict[str, str] = {}
        for use in family.keys:
            assert action_of.setdefault(use.key, use.action) == use.action, (
                f"{family.name}: {use.key!r} is both {action_of[use.key]!r} and {use.action!r}"
            )


def test_no_key_is_bound_twice() -> None:
    """A family's letter never shadows another action's key (n, N and shift+n apart)."""
    seen: dict[str, str] = {}
    for binding in bindings():
        for key in _typed(binding.key):
            assert seen.setdefault(key, str(binding.id)) == binding.id, (key, seen[key], binding.id)


def test_the_footer_word_comes_with_the_letter() -> None:
    # (the footer shows each applicable KeyUse's key and word: record_screen)
    for family in FAMILIES:
        for use in family.keys:
            assert use.word and len(use.key) == 1, (family.name, use)
