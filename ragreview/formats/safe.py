"""SAFE result JSON (google-deepmind/long-form-factuality ``results/*-SAFE.json``).

One document: run configuration, ``per_prompt_data`` and the aggregates. Each prompt
with ``side1_posthoc_eval_data`` / ``side2_posthoc_eval_data`` is a record (id: the
prompt's index, or ``"<index>/side<n>"`` when both sides were evaluated); its facts
are the ``checked_statements`` in order with ``annotation`` Supported / Not Supported /
Irrelevant as the judge's S / NS / IR. The whole document is kept as the dataset's
source document; writing back patches the annotations, the per-prompt counts and
``f1_<K>`` and the top-level ``side<n>_avg_*`` / ``side<n>_std_*`` (mean and population
standard deviation, as SAFE computes them) from the effective labels.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import InputError, RecordError
from ..core.import_items import ImportItem, Unchanged
from ..core.keys import fact_key
from ..core.labels import effective
from .base import QUIET, ExportRecord, Listing, ReadContext, Traits
from .common import (
    Draft,
    changed,
    document_drafts,
    finish,
    finite,
    keyed_response,
    kind,
    reread,
)
from .json_limits import finite_only, non_finite, not_utf8
from .jsonio import load_document, read_text
from .locator import Locator
from .scores import record_values

NAME = "safe"
LISTING = Listing(
    "one JSON document",
    (("per_prompt_data",), ("checked_statements",)),
    "atomic facts from annotation",
)
TRAITS = Traits(may_declare_rubric=False)
ANNOTATIONS = {"supported": "S", "not supported": "NS", "irrelevant": "IR"}
LABEL_TEXT = {"S": "Supported", "NS": "Not Supported", "IR": "Irrelevant"}
COUNT_FIELDS = {"S": "Supported", "NS": "Not Supported", "IR": "Irrelevant"}
SIDES = ("side1", "side2")
DEFAULT_MAX_CLAIMS = 100  # SAFE's f1_-1 means its default K


def sniff(obj: dict[str, Any]) -> bool:
    return "per_prompt_data" in obj or "checked_statements" in obj


def _document(path: Path, text: str) -> tuple[dict[str, Any], bool]:
    """(the document, with a bare eval dict wrapped as prompt 0; True when it was bare)."""
    doc = load_document(path, text)
    if not isinstance(doc, dict):
        raise InputError(str(path), 1, None, f"expected a SAFE result object, got {kind(doc)}")
    if "per_prompt_data" not in doc and "checked_statements" in doc:
        return {"per_prompt_data": [{"side2_posthoc_eval_data": doc}]}, True
    if not isinstance(doc.get("per_prompt_data"), list):
        line = Locator(text).line("per_prompt_data")
        raise InputError(str(path), line, "per_prompt_data", "expected a list")
    return doc, False


def document(path: Path, text: str | None = None) -> str:
    """The source document kept for writing back (as read: a bare eval dict stays bare)."""
    doc = load_document(path, text)
    if isinstance(doc, (dict, list)) and (non_finite(doc) or not_utf8(doc)) is not None:
        doc = finite_only(doc)  # (its record was refused: never written back as NaN)
    return json.dumps(doc, ensure_ascii=False)


def _sides(prompts: list[Any]) -> list[str]:
    return [
        s
        for s in SIDES
        if any(
            isinstance(p, dict) and isinstance(p.get(f"{s}_posthoc_eval_data"), dict)
            for p in prompts
        )
    ]


def read(
    path: Path, text: str | None = None, ctx: ReadContext = QUIET
) -> Iterator[ImportItem | InputError | Unchanged]:
    try:
        if text is None:
            text = read_text(path)
        doc, bare = _document(path, text)
    except InputError as err:
        return iter([err])
    locator = Locator(text)
    return finish(path, _drafts(path, doc, bare, locator), locator=locator)


def _drafts(
    path: Path, doc: Mapping[str, Any], bare: bool, locator: Locator
) -> Iterator[Draft | InputError | Unchanged]:
    """Drafts of every evaluated side of every prompt, located by their JSON path. An
    entry that is not an object, or an evaluation that is not one, is an error (a
    prompt without any evaluation is skipped: SAFE writes those)."""
    prompts = doc["per_prompt_data"]
    sides = _sides(prompts)
    found: dict[str, tuple[int, str, str]] = {}  # JSON path -> (prompt, side, id)

    def evaluations() -> Iterator[tuple[str, Any] | InputError]:
        for index, entry in enumerate(prompts):
            if not isinstance(entry, dict):
                where = f"per_prompt_data[{index}]"
                got = kind(entry)
                yield InputError(
                    str(path), locator.line(where), where, f"expected an object, got {got}"
                )
                continue
            for side in sides:
                field = f"{side}_posthoc_eval_data"
                if entry.get(field) is None:
                    continue
                where = "" if bare else f"per_prompt_data[{index}].{field}"
                found[where] = (index, side, str(index) if len(sides) == 1 else f"{index}/{side}")
                yield where, entry[field]

    def make(ev: Any, number: int, where: str) -> Draft:
        if not isinstance(ev, dict):
            raise RecordError("", f"expected an object, got {kind(ev)}")
        index, side, sid = found[where]
        return draft(ev, index, side, number, sid)

    return document_drafts(path, evaluations(), make, locator)


def draft(ev: Mapping[str, Any], index: int, side: str, number: int, sid: str) -> Draft:
    data: dict[str, Any] = {"task": "longform", "safe": {"prompt": index, "side": side}}
    if isinstance(ev.get("prompt"), str):
        data["question"] = ev["prompt"]
    pairs = ev.get("sentences_and_atomic_facts")
    if isinstance(pairs, list) and all(
        isinstance(p, list) and p and isinstance(p[0], str) for p in pairs
    ):
        response = [[_letters(i), p[0]] for i, p in enumerate(pairs)]
    else:
        response = keyed_response(ev.get("response") or "")
    by_text: dict[str, str] = {}
    for key, sentence in response:
        by_text.setdefault(sentence, key)
    statements = ev.get("checked_statements") or []
    if not isinstance(statements, list):
        raise RecordError("checked_statements", f"expected a list, got {kind(statements)}")
    facts, labels = [], {}
    for i, st in enumerate(statements):
        where = f"checked_statements[{i}]"
        if not isinstance(st, dict):
            raise RecordError(where, f"expected an object, got {kind(st)}")
        text = st.get("atomic_fact")
        if not isinstance(text, str):
            raise RecordError(where + ".atomic_fact", f"expected a string, got {kind(text)}")
        annotation = st.get("annotation")
        label = ANNOTATIONS.get(annotation.lower()) if isinstance(annotation, str) else None
        if label is None:
            raise RecordError(
                where + ".annotation",
                f"expected Supported, Not Supported or Irrelevant, got {json.dumps(annotation)}",
            )
        key = fact_key(i)
        facts.append([key, text, by_text.get(str(st.get("sentence")))])
        labels[key] = label
    data["response"] = response
    data["facts"] = facts
    data["scores"] = {
        f"stored.{name}": finite(value)
        for name, value in ev.items()
        if name in ("num_claims", *COUNT_FIELDS.values()) or name.startswith("f1_")
    }
    judge = {"fact": labels} if labels else {}
    return Draft(number, number, data, judge, json.dumps(ev, ensure_ascii=False), sid)


def _letters(i: int) -> str:
    from ..core.keys import letters

    return letters(i)


# -- writing back ------------------------------------------------------------------------


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    text = settings.get("source.document")
    if not text:
        raise InputError("safe", None, None, "the SAFE result document was not stored at import")
    original = json.loads(text)
    bare = "per_prompt_data" not in original
    doc = {"per_prompt_data": [{"side2_posthoc_eval_data": original}]} if bare else original
    prompts = doc["per_prompt_data"]
    count, touched, exported = 0, set(), set()
    for item in items:
        count += 1
        where = item.record.data.get("safe") or {}
        index, side = int(where.get("prompt", -1)), where.get("side")
        exported.add(index)
        if not changed(item.judge, item.human):
            continue
        ev = prompts[index][f"{side}_posthoc_eval_data"]
        touched |= patch(ev, item, effective(item.judge, item.human), settings)
    if settings.get("export.subset"):
        doc["per_prompt_data"] = [p for i, p in enumerate(prompts) if i in exported]
        aggregate(doc)
    elif touched:
        aggregate(doc, touched)
    out.write(json.dumps(original if bare else doc, ensure_ascii=False, indent=2))
    out.write("\n")
    return count


def read_back(item: ExportRecord, settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The effective labels a re-import of the record as written gives."""
    ev = json.loads(item.source or "{}")
    patch(ev, item, effective(item.judge, item.human), settings)
    where = item.record.data.get("safe") or {}
    return reread(draft(ev, int(where.get("prompt", 0)), str(where.get("side")), 1, "x"))


def patch(
    ev: dict[str, Any],
    item: ExportRecord,
    eff: Mapping[str, Mapping[str, Any]],
    settings: Mapping[str, Any],
) -> set[str]:
    """Patch one prompt's eval dict; the names of the numeric fields that changed. A
    count or F1 the labels leave as it was keeps its stored value."""
    labels = eff.get("fact", {})
    for i, st in enumerate(ev.get("checked_statements") or []):
        label = labels.get(fact_key(i))
        if label is not None and ANNOTATIONS.get(str(st.get("annotation")).lower()) != label:
            st["annotation"] = LABEL_TEXT[label]
    changed_fields = set()
    values = list(labels.get(fact_key(i)) for i in range(len(item.record.facts)))
    judged = list(item.judge.get("fact", {}).get(fact_key(i)) for i in range(len(values)))
    for label, field in COUNT_FIELDS.items():
        if field in ev and values.count(label) != judged.count(label):
            ev[field] = values.count(label)
            changed_fields.add(field)
    for name in [n for n in ev if n.startswith("f1_")]:
        try:
            k = int(name[3:])
        except ValueError:
            continue
        k = DEFAULT_MAX_CLAIMS if k <= 0 else k
        config = {**settings, "longform.k": k}
        f1 = record_values(item.record, eff, config, item.judge).get("longform.f1_at_k")
        before = record_values(item.record, item.judge, config, item.judge)
        if f1 is not None and f1 != before.get("longform.f1_at_k"):
            ev[name] = f1
            changed_fields.add(name)
    return changed_fields


def aggregate(doc: dict[str, Any], only: set[str] | None = None) -> None:
    """SAFE's ``add_aggregation``: mean and population std over prompts of every numeric
    field (of the fields in ``only``, when given), for the ``side<n>_avg_*`` /
    ``side<n>_std_*`` keys the document has."""
    prompts = doc["per_prompt_data"]
    for key in list(doc):
        for side in SIDES:
            for stat in ("avg", "std"):
                prefix = f"{side}_{stat}_"
                if not key.startswith(prefix):
                    continue
                metric = key[len(prefix) :]
                if only is not None and metric not in only:
                    continue
                values = [
                    p[f"{side}_posthoc_eval_data"][metric]
                    for p in prompts
                    if isinstance(p.get(f"{side}_posthoc_eval_data"), dict)
                    and isinstance(p[f"{side}_posthoc_eval_data"].get(metric), (int, float))
                ]
                if values:
                    doc[key] = (
                        statistics.fmean(values) if stat == "avg" else statistics.pstdev(values)
                    )
