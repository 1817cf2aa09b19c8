"""ragas datasets and results, and ragas' own human-annotation export.

Rows (JSON Lines, or a JSON array as ``to_json(orient="records")`` writes) use the v1
names (``question``, ``answer``, ``contexts``, ``ground_truth(s)``) or the v2 names
(``user_input``, ``response``, ``retrieved_contexts``, ``reference``). A row may carry
the judge's verdicts as ragas' prompts return them:
``statements`` ``[{statement, reason, verdict}]`` (faithfulness), ``classifications``
``[{statement, reason, attributed}]`` (context recall) and
``context_precision_verdicts`` ``[{reason, verdict}]`` (one per retrieved context, in
rank order). Metric columns are kept as ``stored.<metric>`` and recomputed on export.

The annotation export (``MetricAnnotation``: ``{metric: [{metric_input, metric_output,
prompts: {name: {prompt_input, prompt_output, edited_output, is_accepted}},
is_accepted}]}``) is read both ways: ``metric_output`` is the judge's ``verdict``; an
``edited_output`` with another verdict, or ``is_accepted: false``, is a human label. A
review written back sets ``is_accepted``/``edited_output`` so ragas' judge alignment
can train on it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import InputError, RecordError
from ..core.import_items import ImportItem, Unchanged
from ..core.keys import context_key, reference_statement_key, statement_key
from ..core.labels import effective
from . import ragas_annotations
from .base import QUIET, ExportRecord, Listing, ReadContext, Traits
from .common import (
    Draft,
    changed,
    document_drafts,
    expect,
    finish,
    finite,
    kind,
    line_drafts,
    loads_source,
    reread,
)
from .jsonio import array_document, load_document, read_text
from .line_writer import write_lines
from .locator import Locator
from .ragas_columns import canonical_fields, pick
from .scores import record_values

NAME = "ragas"
LISTING = Listing(
    "JSON Lines / JSON array rows, or a MetricAnnotation export",
    (("user_input", "retrieved_contexts"), ("question", "contexts")),
    "statement, attributed, context-useful verdicts",
)
# a MetricAnnotation sample carries each override's guideline rule in its edited
# output's reason (export.rules, export.rule_texts)
TRAITS = Traits(may_declare_rubric=False, needs_rules=True)
METRICS = (
    "faithfulness",
    "context_recall",
    "context_precision",
    "context_utilization",
    "context_relevancy",
    "answer_relevancy",
    "answer_correctness",
    "answer_similarity",
)
RECOMPUTED = {
    "faithfulness": "ragas.faithfulness",
    "context_recall": "ragas.context_recall",
    "context_precision": "ragas.context_precision",
}


def sniff(obj: dict[str, Any]) -> bool:
    if ("user_input" in obj and "response" in obj) or "retrieved_contexts" in obj:
        return True
    if "question" in obj and "contexts" in obj:
        return True
    return ragas_annotations.sniff(obj)


def layout(path: Path, text: str) -> str:
    """'lines' (JSON Lines rows), 'array' (a JSON array of rows) or 'annotations'."""
    if array_document(path, text) is not None:
        return "array"
    try:
        doc = load_document(path, text)
    except InputError:  # not one document: JSON Lines (a broken line is its own error)
        return "lines"
    if isinstance(doc, dict):
        return "annotations" if ragas_annotations.sniff(doc) else "lines"
    raise InputError(str(path), 1, None, "expected ragas rows or a MetricAnnotation export")


def document(path: Path, text: str | None = None) -> str | None:
    """What the writer needs besides the records: the layout (and metric order)."""
    if text is None:
        text = read_text(path)
    shape = layout(path, text)
    if shape == "lines":
        return None
    if shape == "array":
        return json.dumps({"layout": "array"})
    doc = load_document(path, text)
    return json.dumps({"layout": "annotations", "metrics": list(doc)})


def read(
    path: Path, text: str | None = None, ctx: ReadContext = QUIET
) -> Iterator[ImportItem | InputError | Unchanged]:
    try:
        if text is None:
            text = read_text(path)
        shape = layout(path, text)
    except InputError as err:
        return iter([err])
    locator = Locator(text)
    if shape == "annotations":
        return ragas_annotations.read(path, load_document(path, text), locator)
    if shape == "array":
        drafts = _array_drafts(path, load_document(path, text), locator)
        return finish(path, drafts, locator=locator)
    return finish(path, _line_drafts(path, text, ctx))


def _line_drafts(
    path: Path, text: str | None, ctx: ReadContext
) -> Iterator[Draft | InputError | Unchanged]:
    return line_drafts(path, text, draft, ctx=ctx)


def _array_drafts(
    path: Path, rows: list[Any], locator: Locator
) -> Iterator[Draft | InputError | Unchanged]:
    def make(row: Any, number: int, _where: str) -> Draft:
        return draft(row, number, number, json.dumps(row, ensure_ascii=False))

    return document_drafts(path, ((f"[{i}]", row) for i, row in enumerate(rows)), make, locator)


def _verdicts(row: Mapping[str, Any], name: str, text: str, flag: str) -> list[tuple[str, Any]]:
    items = expect(row, name, list, optional=True) or []
    out = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            out.append((item, None))
            continue
        if not isinstance(item, dict):
            raise RecordError(f"{name}[{i}]", f"expected an object, got {kind(item)}")
        value = item.get(flag)
        if value is not None and value not in (0, 1):
            raise RecordError(f"{name}[{i}].{flag}", f"expected 0 or 1, got {json.dumps(value)}")
        out.append((str(item.get(text, "")), value))
    return out


def draft(row: Any, position: int, number: int, source: str) -> Draft:
    if not isinstance(row, dict):
        raise RecordError("", f"expected a JSON object, got {kind(row)}")
    if pick(row, "user_input", "question") is None and pick(row, "response", "answer") is None:
        raise RecordError("", "not a ragas row (expected user_input/response or question/answer)")
    data = canonical_fields(row)
    judge: dict[str, dict[str, Any]] = {}
    statements = _verdicts(row, "statements", "statement", "verdict")
    if statements:
        data["statements"] = [[statement_key(i), t] for i, (t, _) in enumerate(statements)]
        labels = {statement_key(i): bool(v) for i, (_, v) in enumerate(statements) if v is not None}
        if labels:
            judge["statement"] = labels
    classes = _verdicts(row, "classifications", "statement", "attributed")
    if classes:
        data["reference_statements"] = [
            [reference_statement_key(i), t] for i, (t, _) in enumerate(classes)
        ]
        labels = {
            reference_statement_key(i): bool(v) for i, (_, v) in enumerate(classes) if v is not None
        }
        if labels:
            judge["attributed"] = labels
    useful = _verdicts(row, "context_precision_verdicts", "reason", "verdict")
    if useful:
        if len(useful) != len(data["documents"]):
            raise RecordError("context_precision_verdicts", "expected one verdict per context")
        judge["context_useful"] = {
            context_key(i): bool(v) for i, (_, v) in enumerate(useful) if v is not None
        }
    data["scores"] = {f"stored.{m}": finite(row[m]) for m in METRICS if m in row}
    id_field = "id" if "id" in row else "sample_id"
    return Draft(position, number, data, judge, source, row.get(id_field), id_field)


# -- writing back ------------------------------------------------------------------------


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    doc = settings.get("source.document")
    shape: dict[str, Any] = json.loads(doc) if doc else {"layout": "lines"}
    if shape["layout"] == "annotations":
        rules = ragas_annotations.Rules(
            settings.get("export.rules") or {}, settings.get("export.rule_texts") or {}
        )
        return ragas_annotations.write(items, out, shape["metrics"], rules)

    def fix(row: dict[str, Any], item: ExportRecord) -> None:
        patch(row, item, effective(item.judge, item.human), settings)

    if shape["layout"] == "lines":
        return write_lines(items, out, "ragas", fix)
    rows = []  # a JSON array file: the whole array is written back at once
    for item in items:
        if item.source is None:
            raise InputError(item.record.id, None, "source", "record has no ragas source")
        row = loads_source(item.source)
        if changed(item.judge, item.human):
            fix(row, item)
        rows.append(row)
    out.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
    return len(rows)


def read_back(item: ExportRecord, settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The effective labels a re-import of the record as written gives."""
    doc = settings.get("source.document")
    if doc and json.loads(doc)["layout"] == "annotations":
        return ragas_annotations.read_back(item)
    row = loads_source(item.source or "{}")
    patch(row, item, effective(item.judge, item.human), settings)
    return reread(draft(row, 1, 1, ""))


# verdict list -> (its verdict field, the text field of a plain-string entry, label, key)
VERDICT_LISTS = (
    ("statements", "verdict", "statement", "statement", statement_key),
    ("classifications", "attributed", "statement", "attributed", reference_statement_key),
    ("context_precision_verdicts", "verdict", "reason", "context_useful", context_key),
)


def patch(
    row: dict[str, Any],
    item: ExportRecord,
    eff: Mapping[str, Mapping[str, Any]],
    settings: Mapping[str, Any],
) -> None:
    for name, flag, text, label, key in VERDICT_LISTS:
        values = eff.get(label, {})
        if row.get(name) is None and label == "context_useful" and values:
            # no verdicts yet: one entry per retrieved context, in rank order, as
            # ragas' context precision prompt returns them (null where not labelled)
            row[name] = [{"reason": "", "verdict": None} for _ in item.record.documents]
        entries: list[Any] = row.get(name) or []
        for i, entry in enumerate(entries):
            value = values.get(key(i))
            if value is None:
                continue
            if isinstance(entry, str):  # a bare statement: give it the prompt's verdict shape
                entry = entries[i] = {text: entry, flag: None}
            if isinstance(entry, dict) and entry.get(flag) != int(value):
                entry[flag] = int(value)
    metrics = record_values(item.record, eff, settings, item.judge)
    before = record_values(item.record, item.judge, settings, item.judge)
    for column, metric in RECOMPUTED.items():
        if column in row and metric in metrics and metrics[metric] != before.get(metric):
            row[column] = metrics[metric]
