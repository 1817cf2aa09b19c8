"""A RAGBench row of the usual shape, read in one pass (issue 27: import CPU).

Nearly every RAGBench row has its sentences already keyed (``documents_sentences``,
``response_sentences``), every key distinct and every field of the type it should
have. For such a row ``plain_draft`` builds the draft and, checked as it goes, the
``Record`` fields the canonical parser would build from it (``Draft.parts``), so that
``common.finish`` need not check the same sentences a second time: reading, checking
and building a RAGBench record was a third of an import's worker.

Anything else (a missing or malformed field, a repeated key, raw text to sentencize)
gives None, and ``ragbench.draft`` reads the row the general way, which names the
problem exactly as it always has. The result for a plain row is the general way's,
value for value: tests/formats/test_ragbench_plain.py compares the two on every
fixture row and on rows changed at random.
"""

from __future__ import annotations

from collections.abc import Container
from itertools import chain
from typing import Any, NoReturn

from ..core.errors import RecordError
from ..core.keys import normalize_key
from ..core.labels import SUPPORT_TOKENS
from ..core.record import built_document
from ..core.record import kind_of as kind
from .common import Draft, finite

SCORE_FIELDS = ("relevance_score", "utilization_score", "completeness_score", "adherence_score")
_SCORE_NAMES = tuple((field, "stored." + field) for field in SCORE_FIELDS)
_LIST = {list}
_STR = {str}


def plain_draft(row: Any, line_no: int, number: int, line: str) -> Draft | None:
    """The draft of a RAGBench row of the usual shape (see the module docstring) with
    its checked ``Record`` fields, else None."""
    if type(row) is not dict:
        return None
    docs = row.get("documents_sentences")
    response = row.get("response_sentences")
    if type(docs) is not list or type(response) is not list:
        return None
    if docs and {*map(type, docs)} != _LIST:
        return None
    doc_pairs = _pairs(list(chain.from_iterable(docs)))
    response_pairs = _pairs(response)
    if doc_pairs is None or response_pairs is None:
        return None
    pairs, doc_keys, doc_chars = doc_pairs
    response_tuple, response_keyset, _ = response_pairs
    question = row.get("question")
    if question is not None and type(question) is not str:
        return None

    judge: dict[str, dict[str, Any]] = {}
    scores: dict[str, Any] = {}
    # the scores as the canonical parser reads them (numbers as floats; none is NaN
    # here), built beside them in the same order
    floats: dict[str, float | None] = {}
    for field, label, counted in (
        ("all_relevant_sentence_keys", "relevant", "ragbench.relevant_listed"),
        ("all_utilized_sentence_keys", "utilized", "ragbench.utilized_listed"),
    ):
        keys = row.get(field)
        if keys is None:
            continue
        if not _strings(keys):
            return None
        if all(map(doc_keys.__contains__, keys)):  # (the common case: the row's own keys)
            judge[label] = dict.fromkeys(keys, True)
        else:
            judge[label] = {n: True for k in keys if (n := resolve_key(k, doc_keys)) is not None}
        scores[counted] = count = len(keys)
        floats[counted] = float(count)
    unsupported_keys = row.get("unsupported_response_sentence_keys")
    if unsupported_keys is not None:
        if not _strings(unsupported_keys):
            return None
        if unsupported_keys:
            unsupported = {normalize_key(k) for k in unsupported_keys}
            judge["supported"] = {k: normalize_key(k) not in unsupported for k, _ in response_tuple}
        else:  # (most rows: every sentence supported; the keys in the response's order)
            judge["supported"] = dict.fromkeys(response_keyset, True)
    support = row.get("sentence_support_information")
    if support is not None:
        if type(support) is not list:
            return None
        if support:
            try:
                judge["support_keys"] = support_keys(support, response_keyset, doc_keys)
            except Exception:  # noqa: BLE001 (a malformed entry: named the general way)
                return None
    for field, name in _SCORE_NAMES:
        if field in row:
            value = row[field]
            # (a finite float as it is: x - x is 0.0 for those alone; else ``finite``)
            score = value if type(value) is float and value - value == 0.0 else finite(value)
            if score is None and value is not None:
                return None
            scores[name] = floats[name] = score

    data: dict[str, Any] = {"task": "trace"}
    if question is not None:
        data["question"] = question
    for field in ("dataset_name", "generation_model_name"):  # (as general_draft keeps them)
        value = row.get(field)
        if type(value) is str:
            data[field] = value
    data["documents"] = [{"sentences": doc} for doc in docs]
    data["response"] = response
    data["scores"] = scores

    documents, start = [], 0
    for doc in docs:
        end = start + len(doc)
        documents.append(built_document(pairs[start:end]))
        start = end
    parts = {
        "task": "trace",
        "question": question,
        "documents": tuple(documents),
        "response": response_tuple,
        "scores": floats,
    }
    # (the record's sentence texts by key, built by the checks: its keys are distinct)
    views = {"sentence_text": doc_keys, "sentence_chars": doc_chars}
    return Draft(line_no, number, data, judge, line, row.get("id"), parts=parts, views=views)


def _pairs(items: list[Any]) -> tuple[tuple[tuple[str, str], ...], dict[str, str], int] | None:
    """``[key, text]`` lists of strings with distinct keys: as tuples, as a dict of text
    by key, and the characters of the texts; None when anything else is there (what the
    canonical parser accepts, checked by a few calls over all the entries at once)."""
    if not items:
        return (), {}, 0
    if {*map(type, items)} != _LIST:
        return None
    try:
        # (dict takes only pairs, ValueError else, and only hashable keys, TypeError)
        text = dict(items)
        # (join refuses anything but strings: a check of every entry in one C call)
        "".join(text)
        chars = len("".join(text.values()))
    except (TypeError, ValueError):
        return None
    if len(text) != len(items):  # a repeated key
        return None
    return tuple(text.items()), text, chars


def _strings(value: Any) -> bool:
    return type(value) is list and (not value or set(map(type, value)) == _STR)


def resolve_key(key: str, known: Container[str]) -> str | None:
    """The key of ``known`` that a label list's ``key`` names (``"0a."`` names ``0a``)."""
    if key in known:
        return key
    norm = normalize_key(key)
    return norm if norm in known else None


def support_keys(
    support: list[Any], response_keys: Container[str], doc_keys: Container[str]
) -> dict[str, list[str]]:
    """The ``support_keys`` labels of ``sentence_support_information``: each response
    sentence's supporting keys, resolved against the row's keys (a support token such
    as ``numerical_reasoning`` kept as it is); RecordError naming a malformed entry."""
    out: dict[str, list[str]] = {}
    for i, entry in enumerate(support):
        rkey = entry.get("response_sentence_key") if type(entry) is dict else None
        keys = entry.get("supporting_sentence_keys") if type(entry) is dict else None
        if keys is None:
            keys = []
        if type(rkey) is not str or type(keys) is not list:
            _support_error(i, entry, rkey)
        if rkey not in response_keys:
            rkey = resolve_key(rkey, response_keys)
            if rkey is None:
                continue  # the judge named a response sentence the row does not have
        if all(map(doc_keys.__contains__, keys)) and len(set(keys)) == len(keys):
            out[rkey] = list(keys)  # the common case: plain keys of the row
            continue
        resolved: list[str] = []
        for k in keys:
            if type(k) is not str:
                raise RecordError(
                    f"sentence_support_information[{i}].supporting_sentence_keys",
                    "expected a list of keys",
                )
            n = k if k in SUPPORT_TOKENS else resolve_key(k, doc_keys)
            if n is not None and n not in resolved:
                resolved.append(n)
        out[rkey] = resolved
    return out


def _support_error(i: int, entry: Any, rkey: Any) -> NoReturn:
    where = f"sentence_support_information[{i}]"
    if not isinstance(entry, dict):
        raise RecordError(where, f"expected an object, got {kind(entry)}")
    if not isinstance(rkey, str):
        raise RecordError(where + ".response_sentence_key", f"expected a string, got {kind(rkey)}")
    raise RecordError(where + ".supporting_sentence_keys", "expected a list of keys")
