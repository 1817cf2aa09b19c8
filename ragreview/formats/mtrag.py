"""MT-RAG / MTRAG-UN (IBM/mt-rag-benchmark): task files and generation-eval output.

One JSON object per line (pandas writes ``NaN`` literals: the raw line is kept as the
source so they survive). ``input`` is the conversation, ``contexts`` the passages,
``targets`` the references, ``predictions[0].text`` the response; ``answerability`` is
a list; ``Collection``/``collection`` both occur. Evaluation output adds ``metrics``, a
dict of lists: the judge's verdicts become labels (``idk_eval``, ``underspecified_eval``,
``RB_llm`` × 10), every stored value is kept as ``stored.<name>`` (first element; max
for the per-passage lists) and the components we cannot compute offline are imported:
``mtrag.bertscore_p``/``_r`` (first target), ``mtrag.bert_k_prec`` (max over passages,
missing values as 0 as MT-RAG does), ``mtrag.rl_f``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import InputError, RecordError
from ..core.import_items import ImportItem, Unchanged
from ..core.labels import ANSWERABILITY, VERDICTS, effective
from ..core.metrics.mtrag import idk_conditioned
from ..core.record import Turn, built_document
from .base import QUIET, ExportRecord, Listing, ReadContext, Traits
from .common import (
    Draft,
    expect,
    finish,
    finite,
    first,
    kind,
    line_drafts,
    loads_source,
    reread,
)
from .id_pass import leading_ids
from .line_writer import write_lines

NAME = "mtrag"
LISTING = Listing(
    "JSON Lines / parquet rows",
    (
        ("task_id", "input"),
        ("task_id", "contexts"),
        ("task_id", "targets"),
        ("task_id", "predictions"),
    ),
    "answerability, idk, underspecified, RAD-Bench rating; stored metrics",
)
TRAITS = Traits(may_declare_rubric=False, source_lines=True)
document = None  # one record per line: its line is all a write needs
PER_PASSAGE = ("BertKPrec", "Extractiveness_RougeL")
IMPORTED = {
    "BertscoreP": "mtrag.bertscore_p",
    "BertscoreR": "mtrag.bertscore_r",
    "RL_F": "mtrag.rl_f",
}


def sniff(obj: dict[str, Any]) -> bool:
    return "task_id" in obj and any(
        k in obj for k in ("input", "contexts", "targets", "predictions")
    )


def read(
    path: Path, text: str | None = None, ctx: ReadContext = QUIET
) -> Iterator[ImportItem | InputError | Unchanged]:
    # a generator: the id pass runs when the first record is asked for. With the ids
    # counted first the records stream through; without (a row whose task_id follows a
    # list or an object), the whole file's records were held until the last was read
    # (issue 27: 180 MB for 2,000 rows, and the page faults of it)
    ids = leading_ids(path, text, "task_id", ctx, after_scalars=True)
    yield from finish(path, _drafts(path, text, ctx), ids=ids)


def _drafts(
    path: Path, text: str | None, ctx: ReadContext
) -> Iterator[Draft | InputError | Unchanged]:
    # pandas writes NaN for missing values
    return line_drafts(path, text, draft, nan=True, ctx=ctx)


def _objects(row: Mapping[str, Any], name: str) -> list[dict[str, Any]]:
    value = expect(row, name, list, optional=True) or []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise RecordError(f"{name}[{i}]", f"expected an object, got {kind(item)}")
        if "text" in item and not isinstance(item["text"], str):
            raise RecordError(f"{name}[{i}].text", f"expected a string, got {kind(item['text'])}")
    return value


_SENTENCIZER: list[Any] = []  # formats.sentencizer, once a record needs it


def _sentencizer() -> Any:
    # (imported on first use, as common.keyed_document does: the formats load without
    # it; a function-level import per record cost more than a list lookup)
    if not _SENTENCIZER:
        from . import sentencizer

        _SENTENCIZER.append(sentencizer)
    return _SENTENCIZER[0]


def draft(row: Any, line_no: int, number: int, line: str) -> Draft:
    """The row's draft, with the ``Record`` fields the canonical parser would build from
    it (``Draft.parts``): every value is checked here or made by us (sentence keys are
    distinct by construction), so ``common.finish`` need not parse the record a second
    time (issue 27: that parse was a tenth of an MT-RAG import).
    tests/formats/test_mtrag_parts.py holds them equal to ``parse_record``'s."""
    if not isinstance(row, dict):
        raise RecordError("", f"expected a JSON object, got {kind(row)}")
    if not sniff(row):
        raise RecordError("", "not an MT-RAG task (expected task_id with input or contexts)")
    turns = _objects(row, "input")
    conversation = [
        {"speaker": str(t.get("speaker", "")), "text": t.get("text", "")} for t in turns
    ]
    question = next((t["text"] for t in reversed(conversation) if t["speaker"] == "user"), None)
    split = _sentencizer()
    documents = []
    docs = []
    for i, ctx in enumerate(_objects(row, "contexts")):
        sentences = split.keyed_document(i, ctx.get("text", ""))
        doc: dict[str, Any] = {"sentences": list(map(list, sentences))}
        doc_id = ctx.get("document_id")
        if doc_id is not None:
            doc_id = doc["id"] = str(doc_id)
        title = ctx.get("title")
        if isinstance(title, str):
            doc["title"] = title
        else:
            title = None
        documents.append(doc)
        docs.append(built_document(sentences, doc_id, title))
    data: dict[str, Any] = {"task": "mtrag"}
    if question is not None:
        data["question"] = question
    collection = row.get("Collection", row.get("collection"))  # both spellings occur
    if isinstance(collection, str):
        data["collection"] = collection  # for metrics --by
    data["conversation"] = conversation
    data["documents"] = documents
    predictions = _objects(row, "predictions")
    response: tuple[tuple[str, str], ...] = ()
    if predictions:
        response = split.keyed_response(predictions[0].get("text", ""))
        data["response"] = list(map(list, response))
    references = [t.get("text", "") for t in _objects(row, "targets")]
    data["references"] = references
    answerability = row.get("answerability")
    label = first(answerability)
    if label is not None and (not isinstance(label, str) or label.upper() not in ANSWERABILITY):
        raise RecordError("answerability", f"expected one of {', '.join(ANSWERABILITY)}")
    judge: dict[str, dict[str, Any]] = {}
    gold = None
    if isinstance(label, str):
        gold = data["answerability"] = label.upper()
        judge["answerability"] = {"*": gold}
    metrics = expect(row, "metrics", dict, optional=True)
    scores = data["scores"] = _scores(metrics or {})
    if metrics:
        judge.update(_verdicts(metrics))
    parts = {
        "task": "mtrag",
        "question": question,
        "conversation": tuple(map(_turn, conversation)),
        "documents": tuple(docs),
        "response": response,
        "references": tuple(references),
        "answerability": gold,
        "scores": dict(scores),  # (each a float or None already: ``finite``)
    }
    return Draft(line_no, number, data, judge, line, row.get("task_id"), "task_id", parts=parts)


def _turn(turn: dict[str, str]) -> Turn:
    """``Turn(**turn)`` without the frozen dataclass's ``__init__`` (its guarded
    ``__setattr__`` per field was a quarter of a multi-turn record's draft): ``turn``
    holds exactly its fields, checked by the draft, and Turn has no ``__post_init__``."""
    made = _NEW(Turn)
    made.__dict__.update(turn)
    return made


_NEW = object.__new__


def _values(metrics: Mapping[str, Any], name: str) -> list[Any]:
    value = metrics.get(name)
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _scores(metrics: Mapping[str, Any]) -> dict[str, float | None]:
    scores: dict[str, float | None] = {}
    for name in metrics:
        values = _values(metrics, name)
        numbers = [finite(v) for v in values]
        if not values or all(isinstance(v, str) for v in values):
            continue  # e.g. idk_eval "unknown": a verdict, not a score
        if name in PER_PASSAGE:
            scores[f"stored.{name}"] = max((n or 0.0) for n in numbers)
        else:
            scores[f"stored.{name}"] = numbers[0]
    for name, canonical in IMPORTED.items():
        values = _values(metrics, name)
        if values:
            scores[canonical] = finite(values[0])
    prec = _values(metrics, "BertKPrec")
    if prec:
        scores["mtrag.bert_k_prec"] = max((finite(v) or 0.0) for v in prec)
    return scores


def _verdicts(metrics: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    judge: dict[str, dict[str, Any]] = {}
    for name, label in (("idk_eval", "idk"), ("underspecified_eval", "underspecified")):
        value = finite(first(metrics.get(name)))
        if value is not None and value in VERDICTS:
            judge[label] = {"*": int(value) if value in (0, 1) else value}
    rating = finite(first(metrics.get("RB_llm")))
    if rating is not None:
        judge["rb_llm_rating"] = {"*": rating_of(rating)}
    return judge


def rating_of(rb_llm: float) -> float:
    """The 1-10 rating behind an ``RB_llm`` value (rating / 10): the shortest decimal
    that divides back to it, so 0.7 reads as 7.0 and a rating a review wrote back as
    ``rating / 10`` reads as exactly that rating."""
    rounded = round(rb_llm * 10, 6)
    if rounded / 10 == rb_llm:
        return rounded
    near = rb_llm * 10
    for candidate in (near, math.nextafter(near, math.inf), math.nextafter(near, -math.inf)):
        if candidate / 10 == rb_llm:
            return candidate
    return near


# -- writing back ------------------------------------------------------------------------

# conditioned field -> (raw metric field, whether that script version knows UNDERSPECIFIED)
CONDITIONED_FROM = {
    "RB_agg_idk_underspecified": ("RB_agg", True),
    "RB_llm_idk_underspecified": ("RB_llm", True),
    "RL_F_idk_underspecified": ("RL_F", True),
    "RB_agg_idk": ("RB_agg", False),
    "RB_llm_idk": ("RB_llm", False),
    "RL_F_idk": ("RL_F", False),
}


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    def fix(row: dict[str, Any], item: ExportRecord) -> None:
        patch(row, item, effective(item.judge, item.human), settings)

    return write_lines(items, out, "MT-RAG", fix)


def read_back(item: ExportRecord, settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The effective labels a re-import of the record as written gives."""
    row = loads_source(item.source or "{}")
    patch(row, item, effective(item.judge, item.human), settings)
    return reread(draft(row, 1, 1, ""))


def patch(
    row: dict[str, Any],
    item: ExportRecord,
    eff: Mapping[str, Mapping[str, Any]],
    settings: Mapping[str, Any],
) -> None:
    """Write the changed verdicts where MT-RAG's scripts keep them. A row without
    ``metrics`` (a task file) gets one holding just those verdicts, under the names
    ``run_generation_eval.py`` gives them (docs/formats.md)."""
    judge = item.judge

    def value(layer: Mapping[str, Mapping[str, Any]], name: str) -> Any:
        return layer.get(name, {}).get("*")

    def differs(name: str) -> bool:
        return value(eff, name) is not None and value(eff, name) != value(judge, name)

    if differs("answerability"):
        old = row.get("answerability")
        new = eff["answerability"]["*"]
        row["answerability"] = [new, *old[1:]] if isinstance(old, list) and old else [new]
    changes: dict[str, list[Any]] = {}
    for name, label in (("idk_eval", "idk"), ("underspecified_eval", "underspecified")):
        if differs(label):
            changes[name] = [value(eff, label)]
    if differs("rb_llm_rating"):
        changes["RB_llm"] = [value(eff, "rb_llm_rating") / 10]  # as extract_rating scales it
    metrics = row.get("metrics")
    if not isinstance(metrics, dict):
        if changes:
            row["metrics"] = changes
        return
    before = {name: _first(metrics.get(raw)) for name, (raw, _) in CONDITIONED_FROM.items()}
    metrics.update(changes)
    for name, (raw, knows_underspecified) in CONDITIONED_FROM.items():
        if name not in metrics:
            continue
        old = conditioned(before[name], judge, knows_underspecified)
        new = conditioned(_first(metrics.get(raw)), eff, knows_underspecified)
        if not _same(old, new):  # a value the review does not change keeps its text
            metrics[name] = [new]


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value else None


def _same(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and a == b)


def conditioned(
    raw: Any, layer: Mapping[str, Mapping[str, Any]], knows_underspecified: bool
) -> Any:
    """``get_idk_underspec_score`` (``get_idk_score`` for the older fields) of the raw
    metric value as the row holds it: the raw value itself where the script passes it
    through (so its text is kept), else the script's int 0 or 1."""
    answerability = layer.get("answerability", {}).get("*")
    if answerability == "UNDERSPECIFIED" and not knows_underspecified:
        answerability = None  # older scripts treat it like ANSWERABLE
    idk = layer.get("idk", {}).get("*")
    under = layer.get("underspecified", {}).get("*")
    result = idk_conditioned(raw, answerability, idk, under)
    return raw if result is raw or result is None else int(result)
