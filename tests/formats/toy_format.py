"""A toy format, written the way docs/contributing.md ("Add a format") says: one
module that declares every member of ``formats.base.Adapter``. One answer per line
with its claims checked: ``{"toy_id", "answer", "claims": [{"text", "ok"}]}``, read as
a long-form record whose facts are the claims, ``S`` where ``ok`` else ``NS``.
(test_add_a_format.py registers it as the recipe's second step does.)"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from ragreview.core.errors import InputError, RecordError
from ragreview.core.import_items import ImportItem, Unchanged
from ragreview.core.keys import fact_key, response_key
from ragreview.core.labels import effective
from ragreview.formats.base import QUIET, ExportRecord, Listing, ReadContext, Traits
from ragreview.formats.common import (
    Draft,
    expect,
    finish,
    line_drafts,
    loads_source,
    reread,
)
from ragreview.formats.line_writer import write_lines

NAME = "toy"
LISTING = Listing("JSON Lines rows", (("toy_id", "claims"),), "claims as atomic facts S / NS")
TRAITS = Traits(may_declare_rubric=False)  # the reader keeps only the fields it knows
document = None  # one record per line: its line is all a write needs


def sniff(obj: dict[str, Any]) -> bool:
    return "toy_id" in obj and isinstance(obj.get("claims"), list)


def read(
    path: Path, text: str | None = None, ctx: ReadContext = QUIET
) -> Iterator[ImportItem | InputError | Unchanged]:
    return finish(path, line_drafts(path, text, draft, ctx=ctx))


def draft(row: Any, line_no: int, number: int, line: str) -> Draft:
    if not isinstance(row, dict):
        raise RecordError("", "expected a JSON object")
    answer = expect(row, "answer", str)
    facts, labels = [], {}
    for i, claim in enumerate(expect(row, "claims", list)):
        if not isinstance(claim, dict) or not isinstance(claim.get("text"), str):
            raise RecordError(f"claims[{i}].text", "expected an object with a text")
        facts.append([fact_key(i), claim["text"], response_key(0)])
        labels[fact_key(i)] = "S" if claim.get("ok") else "NS"
    data = {"task": "longform", "response": [[response_key(0), answer]], "facts": facts}
    return Draft(line_no, number, data, {"fact": labels}, line, row.get("toy_id"), "toy_id")


def patch(row: dict[str, Any], item: ExportRecord) -> None:
    labels = effective(item.judge, item.human).get("fact", {})
    for i, claim in enumerate(row["claims"]):
        claim["ok"] = labels.get(fact_key(i)) == "S"


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    return write_lines(items, out, "toy", lambda row, item: patch(row, item))


def read_back(item: ExportRecord, settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The labels a re-import of the record as ``write`` writes it gives."""
    row = loads_source(item.source or "{}")
    patch(row, item)
    return reread(draft(row, 1, 1, ""))
