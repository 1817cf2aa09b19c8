"""RAGBench rows (HF dataset ``rungalileo/ragbench``), one JSON object per line.

Keys come with the rows and are kept verbatim; label lists may spell them with a
trailing dot (``"0a."``). Adherence is read from ``unsupported_response_sentence_keys``
(``fully_supported`` is null in most rows). Keys a label list names that the record
does not have are left out of the judge layer but stay in the source; the raw list
lengths (duplicates and unknown keys kept, as the shipped scores count them) are kept
as ``scores["ragbench.relevant_listed"]`` / ``["ragbench.utilized_listed"]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import InputError, RecordError
from ..core.import_items import ImportItem, Unchanged
from ..core.keys import normalize_key
from ..core.labels import effective
from ..core.record import Record
from .base import QUIET, ExportRecord, Listing, ReadContext, Traits
from .common import (
    Draft,
    expect,
    finish,
    finite,
    keyed_document,
    keyed_response,
    kind,
    line_drafts,
    loads_source,
    reread,
)
from .id_pass import leading_ids
from .line_writer import write_lines
from .ragbench_plain import plain_draft, resolve_key, support_keys
from .scores import record_values

NAME = "ragbench"
LISTING = Listing(
    "JSON Lines / parquet rows",
    (("documents_sentences",), ("all_relevant_sentence_keys",)),
    "TRACe labels from the key lists; stored *_score",
)
TRAITS = Traits(may_declare_rubric=False, rows_stand_alone=True, source_lines=True)
document = None  # one record per line: its line is all a write needs
SCORE_FIELDS = {
    "relevance_score": "trace.relevance",
    "utilization_score": "trace.utilization",
    "completeness_score": "trace.completeness",
    "adherence_score": "trace.adherence",
}


def sniff(obj: dict[str, Any]) -> bool:
    return "documents_sentences" in obj or "all_relevant_sentence_keys" in obj


def read(
    path: Path, text: str | None = None, ctx: ReadContext = QUIET
) -> Iterator[ImportItem | InputError | Unchanged]:
    # a generator: the id pass over the file runs when the first record is asked for
    ids = leading_ids(path, text, "id", ctx)
    yield from finish(
        path, _drafts(path, text, ctx), validate_labels=False, ids=ids, rename=source_field
    )


def _drafts(
    path: Path, text: str | None, ctx: ReadContext
) -> Iterator[Draft | InputError | Unchanged]:
    return line_drafts(path, text, draft, ctx=ctx)


_DOC_SENTENCES = re.compile(r"^documents\[(\d+)\]\.sentences")


def source_field(field: str) -> str:
    """The row's own name for a field of the canonical record (for error messages)."""
    if field.startswith("response["):
        return "response_sentences" + field[len("response") :]
    return _DOC_SENTENCES.sub(r"documents_sentences[\1]", field)


def _key_list(row: Mapping[str, Any], name: str) -> list[str]:
    value = row.get(name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
        raise RecordError(name, f"expected a list of sentence keys, got {kind(value)}")
    return value


def draft(row: Any, line_no: int, number: int, line: str) -> Draft:
    """The row's draft: a row of the usual shape in one pass (``ragbench_plain``), any
    other the general way (``general_draft``), which names what is wrong with it."""
    plain = plain_draft(row, line_no, number, line)
    return general_draft(row, line_no, number, line) if plain is None else plain


def general_draft(row: Any, line_no: int, number: int, line: str) -> Draft:
    """Any row's draft, its record checked later by the canonical parser (``finish``)."""
    if not isinstance(row, dict):
        raise RecordError("", f"expected a JSON object, got {kind(row)}")
    if not sniff(row):
        raise RecordError("", "not a RAGBench row (no documents_sentences or label lists)")
    documents = []
    if "documents_sentences" in row:
        docs = expect(row, "documents_sentences", list)
        for i, doc in enumerate(docs):
            # the pairs themselves are checked once, by the canonical parser (see
            # source_field for how its error is reported)
            if type(doc) is not list:
                raise RecordError(f"documents_sentences[{i}]", f"expected a list, got {kind(doc)}")
            documents.append({"sentences": doc})
    else:
        for i, doc in enumerate(expect(row, "documents", list, optional=True) or []):
            if not isinstance(doc, str):
                raise RecordError(f"documents[{i}]", f"expected a string, got {kind(doc)}")
            documents.append({"sentences": keyed_document(i, doc)})
    if "response_sentences" in row:
        response = expect(row, "response_sentences", list)
    else:
        response = keyed_response(expect(row, "response", str, optional=True) or "")

    try:
        doc_keys = {k for doc in documents for k, _ in doc["sentences"]}
        response_keys = [k for k, _ in response]
        if not set(map(type, doc_keys)) | set(map(type, response_keys)) <= {str}:
            raise TypeError
    except (TypeError, ValueError):  # a malformed pair: the canonical parser names it
        doc_keys, response_keys = set(), []
    judge: dict[str, dict[str, Any]] = {}
    scores: dict[str, float | None] = {}
    for field, label, counted in (
        ("all_relevant_sentence_keys", "relevant", "ragbench.relevant_listed"),
        ("all_utilized_sentence_keys", "utilized", "ragbench.utilized_listed"),
    ):
        if row.get(field) is not None:
            keys = _key_list(row, field)
            judge[label] = {n: True for k in keys if (n := resolve_key(k, doc_keys)) is not None}
            scores[counted] = len(keys)
    if row.get("unsupported_response_sentence_keys") is not None:
        unsupported = {
            normalize_key(k) for k in _key_list(row, "unsupported_response_sentence_keys")
        }
        judge["supported"] = {k: normalize_key(k) not in unsupported for k in response_keys}
    support = expect(row, "sentence_support_information", list, optional=True)
    if support:
        judge["support_keys"] = support_keys(support, set(response_keys), doc_keys)
    for field in SCORE_FIELDS:
        if field in row:
            value = row[field]
            if value is not None and finite(value) is None:
                raise RecordError(field, f"expected a number, got {kind(value)}")
            scores["stored." + field] = finite(value)
    data: dict[str, Any] = {"task": "trace"}
    question = expect(row, "question", str, optional=True)
    if question is not None:
        data["question"] = question
    for field in ("dataset_name", "generation_model_name"):  # for metrics --by
        if isinstance(row.get(field), str):
            data[field] = row[field]
    data["documents"] = documents
    data["response"] = response
    data["scores"] = scores
    return Draft(line_no, number, data, judge, line, row.get("id"))


# -- writing back ------------------------------------------------------------------------


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    def fix(row: dict[str, Any], item: ExportRecord) -> None:
        patch(row, item.record, item.judge, effective(item.judge, item.human), settings)

    return write_lines(items, out, "RAGBench", fix)


def read_back(item: ExportRecord, settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The effective labels a re-import of the record as written gives."""
    row = loads_source(item.source or "{}")
    patch(row, item.record, item.judge, effective(item.judge, item.human), settings)
    return reread(draft(row, 1, 1, ""), validate_labels=False)


def _true_keys(layer: Mapping[str, Mapping[str, Any]], name: str) -> set[str]:
    return {k for k, v in layer.get(name, {}).items() if v}


def rewrite_keys(original: list[str], wanted: set[str], order: list[str]) -> list[str]:
    """The label list for ``wanted``: entries of ``original`` (verbatim, dots and all)
    that are still wanted or name no key of the record, then added keys in record order."""
    known = set(order)
    kept, covered = [], set()
    for raw in original:
        n = resolve_key(raw, known)
        if n is None or n in wanted:
            kept.append(raw)
            if n is not None:
                covered.add(n)
    return kept + [k for k in order if k in wanted and k not in covered]


def patch(
    row: dict[str, Any],
    record: Record,
    judge: Mapping[str, Mapping[str, Any]],
    eff: Mapping[str, Mapping[str, Any]],
    settings: Mapping[str, Any],
) -> None:
    doc_order = [k for k, _ in record.doc_sentences]
    for field, label in (
        ("all_relevant_sentence_keys", "relevant"),
        ("all_utilized_sentence_keys", "utilized"),
    ):
        wanted = _true_keys(eff, label)
        if wanted != _true_keys(judge, label):
            row[field] = rewrite_keys(row.get(field) or [], wanted, doc_order)
    resp_order = [k for k, _ in record.response]
    eff_sup, judge_sup = eff.get("supported", {}), judge.get("supported", {})
    if any(eff_sup.get(k) != judge_sup.get(k) for k in resp_order):
        unsupported = {k for k in resp_order if eff_sup.get(k) is False}
        row["unsupported_response_sentence_keys"] = rewrite_keys(
            row.get("unsupported_response_sentence_keys") or [], unsupported, resp_order
        )
    eff_keys, judge_keys = eff.get("support_keys", {}), judge.get("support_keys", {})
    entries = row.get("sentence_support_information")
    described = set()
    for entry in entries or []:
        rkey = resolve_key(str(entry.get("response_sentence_key")), set(resp_order))
        if rkey is None:
            continue
        described.add(rkey)
        if eff_sup.get(rkey) != judge_sup.get(rkey):
            entry["fully_supported"] = eff_sup.get(rkey)
        if eff_keys.get(rkey) != judge_keys.get(rkey) and rkey in eff_keys:
            entry["supporting_sentence_keys"] = list(eff_keys[rkey])
    # supporting keys for a response sentence the judge said nothing about: a new entry,
    # in the shape of the labelling prompt's answer (the row keeps its other entries)
    added = [
        {
            "response_sentence_key": k,
            "explanation": "",
            "supporting_sentence_keys": list(eff_keys[k]),
            "fully_supported": eff_sup.get(k),
        }
        for k in resp_order
        if k in eff_keys and k not in described and eff_keys[k] != judge_keys.get(k)
    ]
    if added:
        row["sentence_support_information"] = [*(entries or []), *added]
    # a score is rewritten only when the labels change it: one the review leaves as it
    # was keeps its stored text, even where the recomputation differs in the last digit
    values = record_values(record, eff, settings, judge)
    before = record_values(record, judge, settings, judge)
    for field, metric in SCORE_FIELDS.items():
        value = values.get(metric)
        if field in row and value is not None and value != before.get(metric):
            row[field] = bool(value) if isinstance(row[field], bool) else value
