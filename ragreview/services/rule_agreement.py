"""``agreement`` per guideline rule (docs/align.md): judge vs reviewer on the items
whose reviewer value names a rule (``label … --rule R3``), per rule and label, with the
main report's per-label statistics (binary view, judge = prediction)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import sqlite_utils

from ..core import label_items
from ..core.agreement import binary_stats_of_counts
from ..core.labels import CATALOGUE, value_of
from ..store import guidelines, review_queries
from ..store import records as store_records


def build(db: sqlite_utils.Database, dataset: str, *, all_reviewed: bool) -> dict[str, Any] | None:
    """``{rule: {"text", "items", "labels": {label: binary block}}}`` over the reviewed
    records the main report counts; None when no reviewed item names a rule."""
    sample = review_queries.latest_sample(db, dataset)
    only = None if sample is None or all_reviewed else set(sample.members)
    texts = guidelines.rules(db, dataset)
    counts: dict[str, dict[str, Counter[tuple[bool, bool]]]] = {}
    for stored in store_records.iterate(db, dataset, status="reviewed"):
        if only is not None and stored.rowid not in only:
            continue
        tags = guidelines.label_rules(db, stored.rowid)
        for (name, target), rule in tags.items():
            human = stored.human.get(name, {}).get(target)
            judge = value_of(stored.judge, name, target)
            if name not in CATALOGUE or human is None or judge is None:
                continue
            pair = (label_items.binary(name, judge), label_items.binary(name, human))
            counts.setdefault(rule, {}).setdefault(name, Counter())[pair] += 1
    if not counts:
        return None
    out: dict[str, Any] = {}
    for rule in sorted(counts, key=lambda r: (len(r), r)):  # R2 before R10
        labels = {n: binary_stats_of_counts(c) for n, c in sorted(counts[rule].items())}
        out[rule] = {
            "text": texts.get(rule),
            "items": sum(block["n"] for block in labels.values()),
            "labels": labels,
        }
    return out
