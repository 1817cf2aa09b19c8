"""A dataset's guidelines: Markdown whose rules carry ids such as ``R3`` (docs/align.md).

A rule is a line whose first word, after any Markdown list or heading marker and
emphasis, is ``R`` and a number, followed by its text (``- **R3**: a hedge …``,
``## R3. …``, ``R3 — …``). Its text runs on over the following lines until a blank
line, a heading or the next rule.
"""

from __future__ import annotations

import re

RULE_ID = re.compile(r"^R\d+$")
_RULE_LINE = re.compile(r"^\s*(?:#+\s*|[-*+]\s+|\d+[.)]\s+)?[*_`]*(R\d+)[*_`]*\s*[:.)—–-]?\s*(.*)$")
_BREAK = re.compile(r"^\s*(#|$)")


def parse_rules(text: str) -> dict[str, str]:
    """Rule id -> its text, in the order of the file (a repeated id keeps the first)."""
    rules: dict[str, str] = {}
    current: str | None = None
    for line in text.splitlines():
        found = _RULE_LINE.match(line)
        if found:
            rule_id, body = found.groups()
            current = rule_id if rule_id not in rules else None
            if current is not None:
                rules[current] = body.strip()
            continue
        if current is None or _BREAK.match(line):
            current = None
            continue
        rules[current] = (rules[current] + " " + line.strip()).strip()
    return rules


def rule_line(rule_id: str, text: str | None) -> str:
    """``Guideline rule: R3 (its text)``: a correction's rule where a format has only a
    reason to carry it in (ragas' ``edited_output``)."""
    return f"Guideline rule: {rule_id}" + (f" ({text})" if text else "")


def valid_rule_id(text: str) -> bool:
    return bool(RULE_ID.match(text))
