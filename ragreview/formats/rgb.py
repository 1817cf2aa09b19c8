"""RGB (chen700564/RGB): its data files and the prediction files its scripts write.

All are JSON Lines despite the ``.json`` name. Data files (``en.json``, ``*_int.json``
with the ``asnwer1`` spelling, ``*_fact.json``, ``*_refine.json``) carry ``answer`` and
document pools; prediction files (``evalue.py``) carry ``ans``, ``label``,
``prediction``, ``docs``, ``noise_rate``, ``factlabel``; the judge scripts add
``evaluation``. The task comes from the file name (``_fact``, ``_int``) or content,
and ``noise_rate`` (1.0 is negative rejection).

Judge labels: ``label`` ``[-1]`` is a rejection (its parts are then matched with RGB's
``checkanswer``, which RGB itself skips), otherwise one match bit per answer part;
``factlabel`` is error detection. Where the judge scripts' ``evaluation`` is present,
its verdict is a label of its own, beside evalue.py's and never replacing them:
``not_addressed`` ("not addressed", reject_evalue.py) or ``identified`` ("has
identified"/"Yes", fact_evalue.py); the record's data says which script wrote it
(``rgb_script``). A prediction without ``label`` is labelled with evalue.py's own
rules, on the prediction as evalue.py keeps it (spaces removed for a Chinese dataset);
a data file without predictions has nothing to label.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from ..core import rgb_rules
from ..core.errors import InputError, RecordError
from ..core.import_items import ImportItem, Unchanged
from ..core.keys import part_key
from ..core.labels import check_layer, effective
from .base import QUIET, ExportRecord, Listing, ReadContext, Traits
from .common import (
    Draft,
    expect,
    finish,
    keyed_document,
    keyed_response,
    kind,
    line_drafts,
    loads_source,
)
from .id_pass import leading_ids
from .line_writer import write_lines

NAME = "rgb"
LISTING = Listing(
    "JSON Lines (.json) rows",
    (("query", "prediction"), ("query", "positive", "negative")),
    "rejected, answer parts matched, error detected",
)
TRAITS = Traits(may_declare_rubric=False, source_lines=True)
document = None  # one record per line: its line is all a write needs

# Canonical texts written back when a reviewer overrides a verdict of RGB's LLM judge:
# the endings of the judge prompts' own demonstrations, which the scripts' rules read.
ADDRESSED_TEXT = "Yes, the question is addressed by the documents."
NOT_ADDRESSED_TEXT = "No, the question is not addressed by the documents."
IDENTIFIED_TEXT = "Yes, the model has identified the factual errors."
NOT_IDENTIFIED_TEXT = "NO, the model fail to identify the factual errors."


def sniff(obj: dict[str, Any]) -> bool:
    return "query" in obj and ("prediction" in obj or "positive" in obj or "negative" in obj)


def read(
    path: Path, text: str | None = None, ctx: ReadContext = QUIET
) -> Iterator[ImportItem | InputError | Unchanged]:
    # a generator: the id pass over the file runs when the first record is asked for
    yield from finish(path, _drafts(path, text, ctx), ids=leading_ids(path, text, "id", ctx))


def _drafts(
    path: Path, text: str | None, ctx: ReadContext
) -> Iterator[Draft | InputError | Unchanged]:
    return line_drafts(path, text, lambda obj, *where: draft(obj, path.name, *where), ctx=ctx)


def task_of(row: Mapping[str, Any], filename: str) -> str:
    if "_fact" in filename or "fakeanswer" in row or "positive_wrong" in row:
        return "rgb-counterfactual"
    if "_int" in filename or "asnwer1" in row or "answer1" in row:
        return "rgb-integration"
    if row.get("noise_rate") == 1:
        return "rgb-negative"
    return "rgb-noise"


def is_chinese(filename: str, row: Mapping[str, Any]) -> bool:
    """evalue.py's ``'zh' in dataset``: the dataset named in the file name (``zh``,
    ``zh_int``, ``zh_fact``, ``prediction_zh_…``), else Chinese text in the query."""
    name = filename.removeprefix("prediction_")
    if name.startswith("zh"):
        return True
    if name.startswith("en"):
        return False
    query = row.get("query")
    return isinstance(query, str) and any("\u4e00" <= ch <= "\u9fff" for ch in query)


def evaluation_kind(task: str, row: Mapping[str, Any]) -> str | None:
    """Which LLM-judge script wrote ``evaluation``: 'fact' or 'reject' (or none).

    fact_evalue.py runs on the counterfactual files; elsewhere (a file whose name no
    longer says ``_fact``) its answers are told by their words: its demonstrations end
    "…identified the factual errors" / "…fail to identify…", reject_evalue.py's
    "…addressed by the documents"."""
    text = row.get("evaluation")
    if not isinstance(text, str):
        return None
    if task == "rgb-counterfactual":
        return "fact"
    return "fact" if "identif" in text and "addressed" not in text else "reject"


def _strings(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RecordError(where, f"expected a string or a list of strings, got {kind(value)}")
    return value


def _answer(row: Mapping[str, Any], name: str) -> list[list[str]]:
    value = row.get(name)
    if value is None:
        return []
    parts = rgb_rules.answer_parts(value)
    for i, part in enumerate(parts):
        if not all(isinstance(a, str) for a in part):
            raise RecordError(f"{name}[{i}]", "expected a string or a list of strings")
    return parts


def draft(row: Any, filename: str, line_no: int, number: int, line: str) -> Draft:
    if not isinstance(row, dict):
        raise RecordError("", f"expected a JSON object, got {kind(row)}")
    question = expect(row, "query", str)
    if not sniff(row):
        raise RecordError("", "not an RGB record (expected prediction or positive/negative)")
    task = task_of(row, filename)
    answer_name = "ans" if "ans" in row else "answer"
    parts = _answer(row, answer_name)
    noise = expect(row, "noise_rate", (int, float), optional=True)
    docs: list[tuple[str | None, str]] = []
    if "docs" in row:
        docs = [(None, d) for d in _strings(row["docs"], "docs")]
    else:
        for pool in ("positive", "positive_wrong", "negative"):
            for i, item in enumerate(expect(row, pool, list, optional=True) or []):
                # integration files hold one list of documents per answer part
                texts = _strings(item, f"{pool}[{i}]")
                docs.extend((pool, t) for t in texts)
    documents = []
    for i, (title, body) in enumerate(docs):
        doc: dict[str, Any] = {"sentences": keyed_document(i, body)}
        if title is not None:
            doc["title"] = title
        documents.append(doc)
    data: dict[str, Any] = {"task": task, "question": question, "documents": documents}
    prediction = expect(row, "prediction", str, optional=True)
    if prediction is not None:
        data["response"] = keyed_response(prediction)
    data["answer_parts"] = parts
    if row.get("fakeanswer") is not None:
        data["counterfactual"] = _strings(row["fakeanswer"], "fakeanswer")
    if noise is not None:
        data["noise_rate"] = noise
    which = evaluation_kind(task, row)
    if which is not None:
        data["rgb_script"] = which
    judge = _judge(row, task, parts, prediction, is_chinese(filename, row))
    return Draft(line_no, number, data, judge, line, row.get("id"))


def _judge(
    row: Mapping[str, Any],
    task: str,
    parts: list[list[str]],
    prediction: str | None,
    chinese: bool = False,
) -> dict[str, dict[str, Any]]:
    # A data file has no prediction and nothing to label, unless a review exported
    # back into it wrote RGB's own ``label``/``factlabel`` fields (docs/formats.md).
    if prediction is None and "label" not in row and "factlabel" not in row:
        return {}
    if prediction is not None and chinese:
        # evalue.py.predict: "if 'zh' in dataset: prediction = prediction.replace(' ', '')"
        # before every rule (its files hold the prediction so; others may not)
        prediction = prediction.replace(" ", "")
    judge: dict[str, dict[str, Any]] = {}
    if "label" in row:
        bits = row["label"]
        if not isinstance(bits, list) or not all(
            isinstance(b, int) and not isinstance(b, bool) for b in bits
        ):
            raise RecordError("label", f"expected a list of 0/1 (or [-1]), got {kind(bits)}")
    elif prediction is not None:
        bits = rgb_rules.label(prediction, parts)
    else:
        bits = None
    if bits == [-1]:
        judge["rejected"] = {"*": True}
        # RGB skips the answer check for a rejection; run it so that a reviewer who
        # overturns the rejection starts from RGB's own match bits.
        if prediction is not None:
            matched = rgb_rules.checkanswer(prediction, parts)
            judge["part_matched"] = {part_key(i): bool(b) for i, b in enumerate(matched)}
    elif bits is not None:
        if len(bits) != len(parts) or any(b not in (0, 1) for b in bits):
            raise RecordError(
                "label", f"expected [-1] or {len(parts)} bits of 0/1 (one per answer part)"
            )
        judge["rejected"] = {"*": False}
        judge["part_matched"] = {part_key(i): bool(b) for i, b in enumerate(bits)}
    if "factlabel" in row:
        fact = row["factlabel"]
        if fact not in (0, 1) or isinstance(fact, bool):
            raise RecordError("factlabel", f"expected 0 or 1, got {kind(fact)}")
        judge["error_detected"] = {"*": bool(fact)}
    elif prediction is not None:
        judge["error_detected"] = {"*": rgb_rules.flags_error(prediction)}
    evaluation = row.get("evaluation")
    which = evaluation_kind(task, row)
    if which == "reject":
        judge["not_addressed"] = {"*": rgb_rules.judge_says_not_addressed(evaluation)}  # type: ignore[arg-type]
    elif which == "fact":
        judge["identified"] = {"*": rgb_rules.judge_says_identified(evaluation)}  # type: ignore[arg-type]
    return judge


# -- writing back ------------------------------------------------------------------------


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    def fix(row: dict[str, Any], item: ExportRecord) -> None:
        patch(row, item.record.task or "", item.judge, effective(item.judge, item.human))

    return write_lines(items, out, "RGB", fix)


def read_back(item: ExportRecord, settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The effective labels a re-import of the record as written gives. Only the label
    fields change on export, so the reader's labelling runs on the record as it is (the
    documents, often dozens per row, are not split into sentences again)."""
    task = item.record.task or ""
    row = loads_source(item.source or "{}")
    patch(row, task, item.judge, effective(item.judge, item.human))
    parts = _answer(row, "ans" if "ans" in row else "answer")
    prediction = expect(row, "prediction", str, optional=True)
    chinese = bool(item.record.question) and is_chinese("", {"query": item.record.question})
    judge = _judge(row, task, parts, prediction, chinese)
    return check_layer(item.record, judge, "labels")


def patch(
    row: dict[str, Any],
    task: str,
    judge: Mapping[str, Mapping[str, Any]],
    eff: Mapping[str, Mapping[str, Any]],
) -> None:
    def value(layer: Mapping[str, Mapping[str, Any]], name: str, target: str = "*") -> Any:
        return layer.get(name, {}).get(target)

    parts = rgb_rules.answer_parts(row.get("ans", row.get("answer")))
    part_keys = [part_key(i) for i in range(len(parts))]
    bits_changed = any(
        value(eff, "part_matched", k) != value(judge, "part_matched", k) for k in part_keys
    )
    rejected = bool(value(eff, "rejected"))
    # evalue.py's fields; a data file (no prediction) gets the fields a prediction
    # file has for them
    if rejected and (bits_changed or rejected != bool(value(judge, "rejected"))):
        row["label"] = [-1]
    elif bits_changed or value(eff, "rejected") != value(judge, "rejected"):
        row["label"] = [int(bool(value(eff, "part_matched", k))) for k in part_keys]
    detected = value(eff, "error_detected")
    if detected is not None and detected != value(judge, "error_detected"):
        row["factlabel"] = int(detected)
    # the judge script's own verdict, in the words its rule reads; one `evaluation` per
    # row, read as fact_evalue.py's on a counterfactual record, else reject_evalue.py's
    # (a verdict of the other script cannot be held: the export refuses it)
    if task == "rgb-counterfactual" or evaluation_kind(task, row) == "fact":
        name, texts = "identified", (IDENTIFIED_TEXT, NOT_IDENTIFIED_TEXT)
    else:
        name, texts = "not_addressed", (NOT_ADDRESSED_TEXT, ADDRESSED_TEXT)
    verdict = value(eff, name)
    if verdict is not None and verdict != value(judge, name):
        row["evaluation"] = texts[0] if verdict else texts[1]
