"""``export --as disagreements``: the items where a reviewer overrode the judge, one JSON
line each, with the record context, the judge's label and reason and the human's, and
the guideline rule the correction applies (``rule``: id and text, or null): ready as
few-shot examples for the next judge prompt (docs/estimate.md, docs/align.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO

from ..core import families as fam
from ..core.keys import context_key, part_key
from ..core.labels import value_of
from ..core.record import Record
from ..store import guidelines, label_reads
from ..store import records as store_records

if TYPE_CHECKING:
    import sqlite_utils


def _texts(record: Record) -> dict[str, str]:
    """Every keyed item's text: document and response sentences, facts, statements,
    contexts and answer parts."""
    out = dict(record.doc_sentences)
    out.update(record.response)
    out.update((f.key, f.text) for f in record.facts)
    out.update(record.statements)
    out.update(record.reference_statements)
    out.update((context_key(i), d.text) for i, d in enumerate(record.documents))
    out.update((part_key(i), " / ".join(p)) for i, p in enumerate(record.answer_parts))
    return out


def _documents(record: Record, target: str) -> list[dict[str, Any]]:
    """The document holding a document-sentence target; every document otherwise (a
    response sentence or a record-level verdict is judged against all of them)."""
    docs: list[dict[str, Any]] = [  # (typed: mypy would infer the values' union)
        {"id": d.id, "title": d.title, "sentences": [list(s) for s in d.sentences]}
        for d in record.documents
    ]
    for doc in docs:
        if any(key == target for key, _ in doc["sentences"]):
            return [doc]
    return docs


def _rule(rule: str | None, texts: dict[str, str]) -> dict[str, Any] | None:
    return None if rule is None else {"id": rule, "text": texts.get(rule)}


def items(
    db: sqlite_utils.Database, dataset: str, *, reviewed_only: bool = False
) -> Iterator[dict[str, Any]]:
    """One object per overridden item (human value differs from the judge's), file order."""
    status = "reviewed" if reviewed_only else None
    rule_texts = guidelines.rules(db, dataset)
    for stored in store_records.overridden(db, dataset, status=status):
        rules = guidelines.label_rules(db, stored.rowid)
        record, judge = stored.record, stored.judge
        human_by = label_reads.label_authors(db, stored.rowid)
        judge_reasons = fam.reasons(record, fam.families_of(record, (judge,)), stored.source)
        human_reasons = label_reads.latest_reasons(db, stored.rowid)
        texts = _texts(record)
        for name in sorted(stored.human):
            for target, value in sorted(stored.human[name].items()):
                judged = value_of(judge, name, target)  # absent: the catalogue default
                if judged == value:
                    continue  # set to what the judge said: no disagreement
                reviewer, at = human_by.get((name, target), (None, None))
                yield {
                    "record": record.id,
                    "dataset": dataset,
                    "task": record.task,
                    "label": name,
                    "target": target,
                    "item": texts.get(target),
                    "context": {
                        "question": record.question,
                        "conversation": [[t.speaker, t.text] for t in record.conversation],
                        "documents": _documents(record, target),
                        "response": record.response_text,
                    },
                    "judge": {
                        "value": judged,
                        "reason": judge_reasons.get((name, target))
                        or judge_reasons.get((name, "*")),
                    },
                    "human": {
                        "value": value,
                        "reason": human_reasons.get((name, target)),
                        "reviewer": reviewer,
                        "at": at,
                        "status": stored.status,
                    },
                    # the guideline rule the correction applies, with its text
                    "rule": _rule(rules.get((name, target)), rule_texts),
                }


def write(db: sqlite_utils.Database, dataset: str, out: TextIO, *, reviewed_only: bool) -> int:
    """Write the items as JSON Lines; the number written."""
    count = 0
    for item in items(db, dataset, reviewed_only=reviewed_only):
        out.write(json.dumps(item, ensure_ascii=False) + "\n")
        count += 1
    return count
