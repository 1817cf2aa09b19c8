"""The canonical record (docs/formats.md) as frozen dataclasses.

A ``Record`` is a parsed, validated view of one canonical JSON object. The object
itself is kept in ``data`` (without ``labels``) so that unknown fields survive and the
native export is lossless: we never rebuild JSON from the dataclass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import Any

from . import deepeval_items
from .errors import RecordError
from .keys import cell_key, context_key, normalize_key, part_key

Sentence = tuple[str, str]  # (key, text)
# target kinds of a label on one claim against one retrieved chunk (``s1/c0``)
CELL_KINDS = ("statement_chunk", "reference_statement_chunk")


@dataclass(frozen=True)
class Turn:
    """One turn of the conversation before the question: who spoke, and what."""

    speaker: str
    text: str


@dataclass(frozen=True)
class Document:
    """A retrieved document as keyed sentences, with its id and title when given."""

    sentences: tuple[Sentence, ...]
    id: str | None = None
    title: str | None = None

    @property
    def text(self) -> str:
        return " ".join(text for _, text in self.sentences)


def built_document(
    sentences: tuple[Sentence, ...], doc_id: str | None = None, title: str | None = None
) -> Document:
    """``Document(sentences, doc_id, title)`` without the frozen dataclass's ``__init__``,
    whose guarded ``__setattr__`` per field the readers an import runs per document
    cannot afford (issue 27): the fields go straight into the instance dict, where
    ``__init__`` puts them too (Document has no ``__post_init__``)."""
    made = object.__new__(Document)
    made.__dict__.update(sentences=sentences, id=doc_id, title=title)
    return made


@dataclass(frozen=True)
class Fact:
    """A keyed fact of the response, and the response sentence it came from."""

    key: str
    text: str
    sentence: str | None = None  # response sentence key the fact came from


@dataclass(frozen=True)
class Record:
    """One record in the canonical form every format adapter produces (docs/formats.md)."""

    id: str
    task: str | None = None
    question: str | None = None
    conversation: tuple[Turn, ...] = ()
    documents: tuple[Document, ...] = ()
    response: tuple[Sentence, ...] = ()
    references: tuple[str, ...] = ()
    answer_parts: tuple[tuple[str, ...], ...] = ()
    counterfactual: tuple[str, ...] = ()
    noise_rate: float | None = None
    answerability: str | None = None
    facts: tuple[Fact, ...] = ()
    statements: tuple[Sentence, ...] = ()
    reference_statements: tuple[Sentence, ...] = ()
    scores: Mapping[str, float | None] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    # -- derived views used by metrics and validation -------------------------------

    @cached_property
    def sentence_text(self) -> Mapping[str, str]:
        """Each document sentence's text by key (a repeated key: its last sentence's).
        Kept once built (TRACe's stats read it for every record an import stores), or
        handed over by a reader that built it while checking the sentences
        (``formats.ragbench_plain``); not to be changed."""
        text: dict[str, str] = {}
        for doc in self.documents:
            text.update(doc.sentences)
        return text

    @cached_property
    def sentence_chars(self) -> int:
        """The characters of ``sentence_text``'s texts, together."""
        return sum(map(len, self.sentence_text.values()))

    @property
    def doc_sentences(self) -> tuple[Sentence, ...]:
        return tuple(chain.from_iterable(d.sentences for d in self.documents))

    @property
    def response_text(self) -> str:
        return " ".join(text for _, text in self.response)

    def targets(self, kind: str) -> tuple[str, ...]:
        """The keys a label of target kind ``kind`` may name on this record."""
        if kind == "doc":
            return tuple(k for k, _ in self.doc_sentences)
        if kind == "response":
            return tuple(k for k, _ in self.response)
        if kind == "record":
            return ("*",)
        if kind == "part":
            return tuple(part_key(i) for i in range(len(self.answer_parts)))
        if kind == "fact":
            return tuple(f.key for f in self.facts)
        if kind == "statement":
            return tuple(k for k, _ in self.statements)
        if kind == "reference_statement":
            return tuple(k for k, _ in self.reference_statements)
        if kind == "context":
            return tuple(context_key(i) for i in range(len(self.documents)))
        if kind in deepeval_items.KINDS:
            return deepeval_items.keys(self.data, kind)
        if kind in CELL_KINDS:  # claim x chunk (RAGChecker), claim by claim
            claims = self.statements if kind == "statement_chunk" else self.reference_statements
            chunks = range(len(self.documents))
            return tuple(cell_key(k, c) for k, _ in claims for c in chunks)
        raise ValueError(f"unknown target kind {kind!r}")


# -- parsing ------------------------------------------------------------------------

KNOWN_FIELDS = frozenset(
    "id task question conversation documents response references answer_parts "
    "counterfactual noise_rate answerability facts statements reference_statements "
    "scores labels source".split()
)


def _str(value: Any, field_name: str, optional: bool = True) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise RecordError(field_name, f"expected a string, got {kind_of(value)}")
    return value


def kind_of(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _list(value: Any, field_name: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError(field_name, f"expected a list, got {kind_of(value)}")
    return value


_LIST = {list}
_STR = {str}


def _pairs(items: list) -> tuple[tuple[Sentence, ...], set[str]] | None:
    """Non-empty, well-formed ``[key, text]`` pairs with distinct keys, and the set of
    their keys; None when anything is off (``_keyed`` then names the offending entry).
    One unpacking pass, then set/map/zip calls instead of per-entry checks: this runs
    for every sentence list on import."""
    try:
        pairs = [(key, text) for key, text in items]
    except (TypeError, ValueError):  # an entry that is not a pair
        return None
    keys, texts = zip(*pairs)
    keyset = set(keys)
    if (
        set(map(type, keys)) != _STR
        or set(map(type, texts)) != _STR
        or set(map(type, items)) != _LIST  # ("ab" and {"a": 1, "b": 2} unpack too)
        or len(keyset) != len(keys)
    ):
        return None
    return tuple(pairs), keyset


def _keyed(value: Any, field_name: str) -> tuple[Sentence, ...]:
    return _keyed_set(value, field_name)[0]


def _keyed_set(value: Any, field_name: str) -> tuple[tuple[Sentence, ...], set[str]]:
    """``[key, text]`` pairs as tuples, and their keys; RecordError naming the first
    malformed entry."""
    items = _list(value, field_name)
    if not items:
        return (), set()
    fast = _pairs(items)
    if fast is not None:
        return fast
    out = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        where = f"{field_name}[{i}]"
        if not (isinstance(item, list) and len(item) >= 2):
            raise RecordError(where, f"expected [key, text], got {kind_of(item)}")
        key = _str(item[0], where + "[0]", optional=False)
        text = _str(item[1], where + "[1]", optional=False)
        assert key is not None and text is not None
        if key in seen:
            raise RecordError(where, f"duplicate key {key!r}")
        seen.add(key)
        out.append((key, text))
    return tuple(out), seen


def _number(value: Any, field_name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordError(field_name, f"expected a number, got {kind_of(value)}")
    return float(value)


def _documents(docs: list) -> tuple[Document, ...]:
    """The documents, their sentence keys distinct across all of them.

    Every document's sentences are checked as one list (one ``_pairs`` call per record
    instead of one per document: a fifth of a RAGBench record's parse); anything off
    is then found, and named, document by document."""
    # (False: not an object, found and named by the check one by one)
    lists: list[Any] = [doc.get("sentences") if type(doc) is dict else False for doc in docs]
    flat = [pair for sentences in lists if type(sentences) is list for pair in sentences]
    fast = _pairs(flat) if flat else ((), set())
    if fast is None or not all(type(s) is list or s is None for s in lists):
        return _documents_one_by_one(docs)
    pairs, start, documents = fast[0], 0, []
    for i, (doc, sentences) in enumerate(zip(docs, lists, strict=True)):
        end = start + len(sentences or ())
        documents.append(_document(doc, pairs[start:end], f"documents[{i}]"))
        start = end
    return tuple(documents)


def _documents_one_by_one(docs: list) -> tuple[Document, ...]:
    documents = []
    doc_keys: set[str] = set()
    for i, doc in enumerate(docs):
        where = f"documents[{i}]"
        if not isinstance(doc, dict):
            raise RecordError(where, f"expected an object, got {kind_of(doc)}")
        sentences, keys = _keyed_set(doc.get("sentences"), where + ".sentences")
        if not doc_keys.isdisjoint(keys):
            dup = next(key for key, _ in sentences if key in doc_keys)
            raise RecordError(where + ".sentences", f"duplicate key {dup!r}")
        doc_keys |= keys
        documents.append(_document(doc, sentences, where))
    return tuple(documents)


def _document(doc: dict, sentences: tuple[Sentence, ...], where: str) -> Document:
    doc_id = doc.get("id")
    return Document(
        sentences, None if doc_id is None else str(doc_id), _str(doc.get("title"), where + ".title")
    )


def parse_record(obj: Any) -> Record:
    """Validate a canonical JSON object and build a ``Record``.

    Raises ``RecordError`` naming the first offending field.
    """
    if not isinstance(obj, dict):
        raise RecordError("", f"expected a JSON object, got {kind_of(obj)}")
    if "id" not in obj or obj["id"] is None:
        raise RecordError("id", "missing")
    rid = obj["id"]
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        raise RecordError("id", f"expected a string or integer, got {kind_of(rid)}")

    conversation = []
    for i, turn in enumerate(_list(obj.get("conversation"), "conversation")):
        if not isinstance(turn, dict):
            raise RecordError(f"conversation[{i}]", f"expected an object, got {kind_of(turn)}")
        conversation.append(
            Turn(
                _str(turn.get("speaker", ""), f"conversation[{i}].speaker") or "",
                _str(turn.get("text", ""), f"conversation[{i}].text") or "",
            )
        )

    documents = _documents(_list(obj.get("documents"), "documents"))

    answer_parts = []
    for i, part in enumerate(_list(obj.get("answer_parts"), "answer_parts")):
        alts = _list(part, f"answer_parts[{i}]")
        answer_parts.append(
            tuple(
                _str(a, f"answer_parts[{i}][{j}]", optional=False) or "" for j, a in enumerate(alts)
            )
        )

    facts = []
    for i, item in enumerate(_list(obj.get("facts"), "facts")):
        where = f"facts[{i}]"
        if not (isinstance(item, list) and len(item) >= 2):
            raise RecordError(where, f"expected [key, text, sentence_key], got {kind_of(item)}")
        facts.append(
            Fact(
                _str(item[0], where + "[0]", optional=False) or "",
                _str(item[1], where + "[1]", optional=False) or "",
                _str(item[2], where + "[2]") if len(item) > 2 else None,
            )
        )
    if len({f.key for f in facts}) != len(facts):
        raise RecordError("facts", "duplicate fact key")

    scores_obj = obj.get("scores")
    if scores_obj is None:
        scores_obj = {}
    if not isinstance(scores_obj, dict):  # `or {}` would let a falsy [] or "" through
        raise RecordError("scores", f"expected an object, got {kind_of(scores_obj)}")
    scores = {}
    for name, value in scores_obj.items():
        number = _number(value, f"scores.{name}")
        scores[name] = None if number is None or math.isnan(number) else number

    noise_rate = _number(obj.get("noise_rate"), "noise_rate")
    response = obj.get("response")
    references = _list(obj.get("references"), "references")
    data = {k: v for k, v in obj.items() if k != "labels"}
    return Record(
        id=str(rid),
        task=_str(obj.get("task"), "task"),
        question=_str(obj.get("question"), "question"),
        conversation=tuple(conversation),
        documents=documents,
        response=_keyed(response, "response"),
        references=tuple(
            _str(r, f"references[{i}]", optional=False) or "" for i, r in enumerate(references)
        ),
        answer_parts=tuple(answer_parts),
        counterfactual=tuple(
            _str(c, f"counterfactual[{i}]", optional=False) or ""
            for i, c in enumerate(_list(obj.get("counterfactual"), "counterfactual"))
        ),
        noise_rate=noise_rate,
        answerability=_str(obj.get("answerability"), "answerability"),
        facts=tuple(facts),
        statements=_keyed(obj.get("statements"), "statements"),
        reference_statements=_keyed(obj.get("reference_statements"), "reference_statements"),
        scores=scores,
        data=data,
    )


def resolve_target(record: Record, kind: str, target: str) -> str | None:
    """The record's key that ``target`` names (trailing dots allowed), or None."""
    keys = record.targets(kind)
    if target in keys:
        return target
    norm = normalize_key(target)
    return norm if norm in keys else None


def line_hash(line: str | bytes) -> bytes:
    """The fingerprint of one source line (its text without the line break), as
    stored at import and compared, unparsed, at the next one."""
    import hashlib  # (loads OpenSSL: not at every start, issue 27)

    return hashlib.sha1(line.encode() if isinstance(line, str) else line).digest()
