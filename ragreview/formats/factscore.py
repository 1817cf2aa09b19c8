"""FActScore human-labelled data (``labeled_data/*.jsonl``): one biography per line.

``annotations`` is null for an abstention (no facts), else one entry per response
sentence ``{text, is-relevant, model-atomic-facts, human-atomic-facts}``. The response
sentences are the annotation sentences (keys ``a``, ``b``, …), so every fact points at
the sentence it came from; facts are the ``human-atomic-facts`` in order (``f1``, …)
with their labels ``S``/``NS``/``IR`` as the judge layer. ``model-atomic-facts`` stay in
the source for the round trip.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import InputError, RecordError
from ..core.import_items import ImportItem, Unchanged
from ..core.keys import fact_key, response_key
from ..core.labels import FACT_LABELS, effective
from .base import QUIET, ExportRecord, Listing, ReadContext, Traits
from .common import (
    Draft,
    expect,
    finish,
    keyed_response,
    kind,
    line_drafts,
    loads_source,
    reread,
)
from .line_writer import write_lines

NAME = "factscore"
LISTING = Listing(
    "JSON Lines rows",
    (("annotations", "human-atomic-facts"),),
    "atomic facts S / NS / IR",
)
TRAITS = Traits(may_declare_rubric=False, source_lines=True)
document = None  # one record per line: its line is all a write needs


def sniff(obj: dict[str, Any]) -> bool:
    if "annotations" not in obj:
        return False
    anns = obj["annotations"]
    if anns is None:
        return "output" in obj and "topic" in obj
    return isinstance(anns, list) and any(
        isinstance(a, dict) and "human-atomic-facts" in a for a in anns
    )


def read(
    path: Path, text: str | None = None, ctx: ReadContext = QUIET
) -> Iterator[ImportItem | InputError | Unchanged]:
    return finish(path, _drafts(path, text, ctx))


def _drafts(
    path: Path, text: str | None, ctx: ReadContext
) -> Iterator[Draft | InputError | Unchanged]:
    return line_drafts(path, text, draft, ctx=ctx)


def _question(prompt: str | None) -> str | None:
    if prompt is None:
        return None
    return prompt.removeprefix("Question: ").strip() or prompt


def human_facts(row: Mapping[str, Any]) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(annotation index, fact index within it, fact object) for every human fact."""
    for i, ann in enumerate(row.get("annotations") or []):
        for j, fact in enumerate(ann.get("human-atomic-facts") or []):
            yield i, j, fact


def draft(row: Any, line_no: int, number: int, line: str) -> Draft:
    if not isinstance(row, dict):
        raise RecordError("", f"expected a JSON object, got {kind(row)}")
    if "annotations" not in row:
        raise RecordError(
            "annotations", "missing (a FActScore labelled row has it, null or a list)"
        )
    output = expect(row, "output", str)
    data: dict[str, Any] = {"task": "longform"}
    question = _question(expect(row, "input", str, optional=True))
    if question is not None:
        data["question"] = question
    anns = row.get("annotations")
    judge: dict[str, dict[str, Any]] = {}
    if anns is None:
        data["response"] = keyed_response(output)
        return Draft(line_no, number, data, judge, line, row.get("topic"), "topic")
    if not isinstance(anns, list):
        raise RecordError("annotations", f"expected a list or null, got {kind(anns)}")
    response = []
    for i, ann in enumerate(anns):
        if not isinstance(ann, dict) or not isinstance(ann.get("text"), str):
            raise RecordError(f"annotations[{i}].text", "expected an object with a text")
        facts = ann.get("human-atomic-facts")
        if facts is not None and not isinstance(facts, list):
            raise RecordError(f"annotations[{i}].human-atomic-facts", "expected a list or null")
        response.append([response_key(i), ann["text"]])
    facts_out = []
    labels: dict[str, str] = {}
    for n, (i, j, fact) in enumerate(human_facts(row)):
        where = f"annotations[{i}].human-atomic-facts[{j}]"
        if not isinstance(fact, dict) or not isinstance(fact.get("text"), str):
            raise RecordError(where + ".text", "expected an object with a text")
        key = fact_key(n)
        facts_out.append([key, fact["text"], response_key(i)])
        label = fact.get("label")
        if label is not None:
            if label not in FACT_LABELS:
                raise RecordError(where + ".label", f"expected S, NS or IR, got {label!r}")
            labels[key] = label
    data["response"] = response
    data["facts"] = facts_out
    if labels:
        judge["fact"] = labels
    return Draft(line_no, number, data, judge, line, row.get("topic"), "topic")


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    return write_lines(items, out, "FActScore", lambda row, item: patch(row, item))


def read_back(item: ExportRecord, settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The effective labels a re-import of the record as written gives."""
    row = loads_source(item.source or "{}")
    patch(row, item)
    return reread(draft(row, 1, 1, ""))


def patch(row: dict[str, Any], item: ExportRecord) -> None:
    eff = effective(item.judge, item.human).get("fact", {})
    for n, (_i, _j, fact) in enumerate(human_facts(row)):
        value = eff.get(fact_key(n))
        if value is not None and value != fact.get("label"):
            fact["label"] = value
