"""InspectorRAGet experiments (IBM/InspectorRAGet): one JSON document per experiment.

Schema v1 keeps the evaluations in ``evaluations`` (``model_response``,
``annotations``); schema v2 (``schema_version: 2``) in ``results`` (``output``,
``scores``). Both share ``models``, ``metrics`` (each with an ``author``: ``algorithm``
or ``human``), ``documents`` and ``tasks``. One record per evaluation, that is per
(task, model), id ``<task_id>/<model_id>``; question, conversation, contexts and
targets come from the task (a context without text takes it from ``documents``).

- ``algorithm`` metrics are stored scores ``stored.<metric>`` (a categorical one as
  its value's ``numeric_value``).
- ``human`` metrics (categorical or numerical) are record-level labels declared by the
  record's ``rubric`` (value set and order as the file declares them); every
  annotator's values become that annotator's own reviewer layer, and a text metric
  ``<metric>_reason`` is the reason of that annotator's label. The judge layer is
  empty: a reviewer's override is a label of the human layer like any other.

The document without its evaluations is kept as the dataset's source document; writing
back puts each evaluation back in order, a reviewer's overrides written as that
reviewer's annotations (``value``, and ``<metric>_reason`` when the override had a
reason), everything else as read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import InputError, RecordError
from ..core.import_items import ImportItem, Unchanged
from .base import QUIET, ExportRecord, Listing, ReadContext, Traits
from .common import (
    Draft,
    changed,
    document_drafts,
    expect,
    finish,
    finite,
    keyed_document,
    keyed_response,
    kind,
)
from .jsonio import load_document, read_text
from .locator import Locator

NAME = "inspectorraget"
LISTING = Listing(
    "one JSON document (schema v1 or v2)",
    (("tasks", "metrics", "evaluations"), ("tasks", "metrics", "results")),
    "annotators' human metrics as reviewer layers; algorithm metrics as stored scores",
)
TRAITS = Traits(needs_authors=True)
DEFAULT_REVIEWER = "ragreview"  # an override whose author is unknown


def sniff(obj: dict[str, Any]) -> bool:
    return (
        isinstance(obj.get("tasks"), list)
        and isinstance(obj.get("metrics"), list)
        and ("evaluations" in obj or "results" in obj)
    )


def evaluations_key(doc: Mapping[str, Any]) -> str:
    """``results`` (schema v2) or ``evaluations`` (v1)."""
    return (
        "results" if doc.get("schema_version") == 2 or "evaluations" not in doc else "evaluations"
    )


def _scores_key(key: str) -> str:
    return "scores" if key == "results" else "annotations"


def _document(path: Path, text: str | None) -> dict[str, Any]:
    doc = load_document(path, text)
    if not isinstance(doc, dict) or not sniff(doc):
        raise InputError(
            str(path), 1, None, "not an InspectorRAGet experiment (tasks, metrics, evaluations)"
        )
    key = evaluations_key(doc)
    for name in ("tasks", "metrics", key):
        if not isinstance(doc.get(name), list):
            raise InputError(str(path), 1, name, f"expected a list, got {kind(doc.get(name))}")
    return doc


def document(path: Path, text: str | None = None) -> str:
    """The experiment without its evaluations (they are the records' sources)."""
    doc = load_document(path, text)
    if isinstance(doc, dict):
        doc = {**doc, evaluations_key(doc): []}
    return json.dumps(doc, ensure_ascii=False)


def read(
    path: Path, text: str | None = None, ctx: ReadContext = QUIET
) -> Iterator[ImportItem | InputError | Unchanged]:
    try:
        if text is None:
            text = read_text(path)
        doc = _document(path, text)
    except InputError as err:
        return iter([err])
    locator = Locator(text)  # a bad evaluation is reported at its line
    return finish(path, _drafts(path, doc, locator), locator=locator)


# -- the experiment's declarations --------------------------------------------------------


def rubric(metrics: list[Any]) -> dict[str, dict[str, Any]]:
    """The human metrics as record-level label declarations (``core.labels.declared``):
    categorical ones as choices in the file's order with their ``numeric_value``s,
    numerical ones with their range; the aggregator kept for the agreement report."""
    names = {m.get("name") for m in metrics if isinstance(m, dict)}
    out: dict[str, dict[str, Any]] = {}
    for m in metrics:
        if not isinstance(m, dict) or m.get("author") != "human":
            continue
        name = m.get("name")
        if not isinstance(name, str):
            continue
        entry: dict[str, Any] = {"meaning": m.get("description") or m.get("display_name") or name}
        if m.get("type") == "categorical" and isinstance(m.get("values"), list):
            values = [v for v in m["values"] if isinstance(v, dict) and "value" in v]
            entry["kind"] = "choice"
            entry["choices"] = [v["value"] for v in values]
            entry["numeric"] = [finite(v.get("numeric_value")) for v in values]
            shown = [v.get("display_value") for v in values]
            if any(isinstance(d, str) and d != v["value"] for d, v in zip(shown, values)):
                # the names the file gives its values (1 → "No"): the review screen's words
                entry["names"] = [
                    d if isinstance(d, str) else str(v["value"]) for d, v in zip(shown, values)
                ]
        elif m.get("type") == "numerical":
            entry["kind"] = "number"
            if isinstance(m.get("range"), list) and len(m["range"]) >= 2:
                entry["range"] = m["range"][:2]
        else:
            continue  # text metrics are reasons (below) or stay in the source
        entry["aggregator"] = m.get("aggregator") or "average"
        if f"{name}_reason" in names:
            entry["reason"] = f"{name}_reason"
        out[name] = entry
    return out


def _automatic(metrics: list[Any]) -> dict[str, dict[Any, float | None]]:
    """``algorithm`` metrics by name: each value's number (categoricals: numeric_value)."""
    out: dict[str, dict[Any, float | None]] = {}
    for m in metrics:
        if (
            isinstance(m, dict)
            and m.get("author") == "algorithm"
            and isinstance(m.get("name"), str)
        ):
            values = {
                v["value"]: finite(v.get("numeric_value"))
                for v in m.get("values") or []
                if isinstance(v, dict) and isinstance(v.get("value"), (str, int, float))
            }
            out[m["name"]] = values
    return out


def _task_record(task: Mapping[str, Any], documents: Mapping[str, Any]) -> dict[str, Any]:
    """The canonical fields a task gives every evaluation of it."""
    turns = task.get("input")
    if isinstance(turns, str):
        turns = [{"speaker": "user", "text": turns}]
    conversation = [
        {"speaker": str(t.get("speaker", "")), "text": t.get("text", "")}
        for t in (turns if isinstance(turns, list) else [])
        if isinstance(t, dict) and isinstance(t.get("text", ""), str)
    ]
    data: dict[str, Any] = {"task": str(task.get("task_type") or "rag")}
    question = next((t["text"] for t in reversed(conversation) if t["speaker"] == "user"), None)
    if question is not None:
        data["question"] = question
    data["conversation"] = conversation
    docs = []
    for i, ctx in enumerate(task.get("contexts") or []):
        if not isinstance(ctx, dict):
            continue
        known = documents.get(str(ctx.get("document_id")), {})
        text = ctx.get("text", known.get("text", ""))
        doc: dict[str, Any] = {
            "sentences": keyed_document(i, text if isinstance(text, str) else "")
        }
        if ctx.get("document_id") is not None:
            doc["id"] = str(ctx["document_id"])
        title = ctx.get("title", known.get("title"))
        if isinstance(title, str):
            doc["title"] = title
        docs.append(doc)
    data["documents"] = docs
    targets = [t for t in task.get("targets") or [] if isinstance(t, dict)]
    data["references"] = [
        t.get("text", t.get("value"))
        for t in targets
        if isinstance(t.get("text", t.get("value")), str)
    ]
    if isinstance(task.get("answerability"), str):
        data["answerability"] = task["answerability"]
    if isinstance(task.get("dataset"), str):
        data["collection"] = task["dataset"]  # for metrics --by
    return data


def _drafts(
    path: Path, doc: Mapping[str, Any], locator: Locator
) -> Iterator[Draft | InputError | Unchanged]:
    key = evaluations_key(doc)
    documents = {
        str(d.get("document_id")): d for d in doc.get("documents") or [] if isinstance(d, dict)
    }
    tasks = {str(t.get("task_id")): t for t in doc["tasks"] if isinstance(t, dict)}
    declared = rubric(doc["metrics"])
    automatic = _automatic(doc["metrics"])
    by_task: dict[str, dict[str, Any]] = {}  # a task's fields, sentencized once

    def make(ev: Any, number: int, where: str) -> Draft:
        return _draft(ev, number, key, tasks, documents, declared, automatic, by_task)

    evaluations = ((f"{key}[{i}]", ev) for i, ev in enumerate(doc[key]))
    return document_drafts(path, evaluations, make, locator)


def _draft(
    ev: Any,
    number: int,
    key: str,
    tasks: Mapping[str, Any],
    documents: Mapping[str, Any],
    declared: Mapping[str, Mapping[str, Any]],
    automatic: Mapping[str, Mapping[Any, float | None]],
    by_task: dict[str, dict[str, Any]],
) -> Draft:
    if not isinstance(ev, dict):
        raise RecordError("", f"expected an object, got {kind(ev)}")
    task_id = str(expect(ev, "task_id", (str, int)))
    model_id = str(expect(ev, "model_id", (str, int)))
    if task_id not in tasks:
        raise RecordError("task_id", f"no task {task_id!r} in tasks")
    if task_id not in by_task:
        by_task[task_id] = _task_record(tasks[task_id], documents)
    data = {**by_task[task_id], "model": model_id}
    data["response"] = keyed_response(_response(ev, key))
    scores_field = _scores_key(key)
    annotations = expect(ev, scores_field, dict, optional=True) or {}
    scores: dict[str, float | None] = {}
    reviewers: list[tuple[str, str, str, Any, str | None]] = []
    for metric, given in annotations.items():
        if not isinstance(given, dict):
            raise RecordError(f"{scores_field}.{metric}", f"expected an object, got {kind(given)}")
        if metric in automatic:
            entry = given.get("system", next(iter(given.values()), None))
            value = entry.get("value") if isinstance(entry, dict) else None
            numbers = automatic[metric]
            if numbers:  # categorical: the value's numeric_value
                known = isinstance(value, (str, int, float))
                scores[f"stored.{metric}"] = numbers.get(value) if known else None
            else:
                scores[f"stored.{metric}"] = finite(value)
        elif metric in declared:
            reasons = annotations.get(declared[metric].get("reason") or "", {})
            for who, entry in given.items():
                if not isinstance(entry, dict) or "value" not in entry:
                    raise RecordError(f"{scores_field}.{metric}.{who}", "expected {value: …}")
                said = reasons.get(who) if isinstance(reasons, dict) else None
                reason = said.get("value") if isinstance(said, dict) else None
                reviewers.append(
                    (str(who), metric, "*", entry["value"], reason if reason else None)
                )
    data["scores"] = scores
    data["rubric"] = declared
    source = json.dumps(ev, ensure_ascii=False)
    return Draft(
        number, number, data, {}, source, f"{task_id}/{model_id}", reviewers=tuple(reviewers)
    )


def _response(ev: Mapping[str, Any], key: str) -> str:
    if key == "evaluations" or "model_response" in ev:
        return expect(ev, "model_response", str, optional=True) or ""
    output = expect(ev, "output", list, optional=True) or []
    for turn in reversed(output):
        if isinstance(turn, dict) and isinstance(turn.get("content", turn.get("text")), str):
            return str(turn.get("content", turn.get("text")))
    return ""


# -- writing back ------------------------------------------------------------------------


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    text = settings.get("source.document")
    if not text:
        raise InputError(NAME, None, None, "the experiment document was not stored at import")
    doc = json.loads(text)
    key = evaluations_key(doc)
    authors: Mapping[str, Mapping[str, tuple[str, str | None]]] = (
        settings.get("export.authors") or {}
    )
    evaluations = []
    for item in items:
        if item.source is None:
            raise InputError(item.record.id, None, "source", "record has no InspectorRAGet source")
        ev = json.loads(item.source)
        if changed(item.judge, item.human):
            patch(ev, item, authors.get(item.record.id, {}), _scores_key(key))
        evaluations.append(ev)
    doc[key] = evaluations
    out.write(json.dumps(doc, ensure_ascii=False, indent=2))
    out.write("\n")
    return len(evaluations)


def patch(
    ev: dict[str, Any],
    item: ExportRecord,
    authors: Mapping[str, tuple[str, str | None]],
    scores_field: str,
) -> None:
    """Write the record's overrides of declared labels as their authors' annotations.
    Any other override has no field here: it is left out, and the export's loss check
    (``read_back``) names it before anything is written."""
    declared = item.record.data.get("rubric") or {}
    annotations = ev.setdefault(scores_field, {})
    for name, targets in item.human.items():
        if name not in declared or "*" not in targets:
            continue
        if item.judge.get(name, {}).get("*") == targets["*"]:
            continue
        value = targets["*"]
        who, reason = authors.get(name, (DEFAULT_REVIEWER, None))
        mine = annotations.setdefault(name, {}).setdefault(who, {})
        mine["value"] = value
        reason_metric = declared[name].get("reason")
        if reason and reason_metric:
            annotations.setdefault(reason_metric, {}).setdefault(who, {})["value"] = reason


def read_back(item: ExportRecord, settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The labels the file as written holds for the record: its overrides of the labels
    it declares (written as an annotator's values; a re-import reads them as that
    annotator's layer). Every other override is lost, and the export says so."""
    declared = item.record.data.get("rubric") or {}
    held = {
        name: {"*": targets["*"]}
        for name, targets in item.human.items()
        if name in declared and "*" in targets
    }
    return {**{name: dict(targets) for name, targets in item.judge.items()}, **held}
