"""``agreement`` per guideline rule (docs/align.md): judge vs reviewer on the items
whose reviewer value names a rule (``label … --rule R3``), per rule and label, with the
main report's per-label statistics (binary view, judge = prediction)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # sqlite_utils imports click's whole CLI machinery: not at run time
    import sqlite_utils

from ..core import label_items
from ..core.agreement import binary_stats_of_counts
from ..core.labels import CATALOGUE
from ..store import guidelines, review_queries
from ..store.records import label_value


def build(db: sqlite_utils.Database, dataset: str, *, all_reviewed: bool) -> dict[str, Any] | None:
    """``{rule: {"text", "items", "labels": {label: binary block}}}`` over the reviewed
    records the main report counts; None when no reviewed item names a rule.

    One query over the human labels that name a rule (a few), not a pass over every
    reviewed record."""
    sample = review_queries.latest_sample(db, dataset)
    only = None if sample is None or all_reviewed else set(sample.members)
    counts: dict[str, dict[str, Counter[tuple[bool, bool]]]] = {}
    for rowid, name, human_text, judge_text, rule in guidelines.reviewed_rule_labels(db, dataset):
        if name not in CATALOGUE or (only is not None and rowid not in only):
            continue
        human = label_value(human_text)
        # an absent judge label is the catalogue's default (``labels.value_of``)
        judge = CATALOGUE[name].default if judge_text is None else label_value(judge_text)
        if human is None or judge is None:
            continue
        pair = (label_items.binary(name, judge), label_items.binary(name, human))
        counts.setdefault(rule, {}).setdefault(name, Counter())[pair] += 1
    if not counts:
        return None
    texts = guidelines.rules(db, dataset)
    out: dict[str, Any] = {}
    for rule in sorted(counts, key=lambda r: (len(r), r)):  # R2 before R10
        labels = {n: binary_stats_of_counts(c) for n, c in sorted(counts[rule].items())}
        out[rule] = {
            "text": texts.get(rule),
            "items": sum(block["n"] for block in labels.values()),
            "labels": labels,
        }
    return out
