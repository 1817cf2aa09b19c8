"""The one-pass reading of a plain RAGBench row (``formats.ragbench_plain``) gives what
the general reading (``ragbench.general_draft`` and the canonical parser) gives: the same
record, data JSON, judge labels and source id, and for a row it does not take, the same
error naming the same field. Checked on every RAGBench row in the fixtures, the import
bench's rows, and those rows changed at random (seeded) in the ways real files differ:
dotted and unknown keys, repeated keys, missing, null and mistyped fields, pairs of the
wrong length, scores of every JSON type."""

from __future__ import annotations

import copy
import random
from collections import Counter
from dataclasses import fields
from pathlib import Path
from typing import Any

import orjson
import pytest

from bench.import_bench import make_row
from ragreview.core.errors import InputError
from ragreview.core.import_items import ImportItem
from ragreview.core.record import Record
from ragreview.formats import ragbench
from ragreview.formats.common import finish
from ragreview.formats.ragbench_plain import plain_draft
from ragreview.store.records import dumps

from .helpers import FIXTURES

ROWS_FILES = [
    FIXTURES / "handwritten" / "ragbench" / "covidqa_test_rows.jsonl",
    *sorted((FIXTURES / "db" / "compact_styles").glob("*.jsonl")),
]
FIELDS = (
    "id",
    "question",
    "dataset_name",
    "generation_model_name",
    "documents_sentences",
    "response_sentences",
    "all_relevant_sentence_keys",
    "all_utilized_sentence_keys",
    "unsupported_response_sentence_keys",
    "sentence_support_information",
    "relevance_score",
    "utilization_score",
    "completeness_score",
    "adherence_score",
)
ODD_VALUES = [None, 1, 0, -3, 2.5, 1e300, 2**70, True, False, "x", "", [], {}, ["0a"], [1]]


def _fixture_rows() -> list[dict[str, Any]]:
    rows = [orjson.loads(line) for path in ROWS_FILES for line in path.read_bytes().splitlines()]
    rng = random.Random(7)
    return rows + [make_row(i, rng) for i in range(20)]


def _read(rows: list[Any], draft: Any) -> list[Any]:
    """What ``ragbench.read`` gives for these rows (as lines 1..n), with ``draft``."""
    drafts: list[Any] = []
    for n, row in enumerate(rows, start=1):
        try:
            drafts.append(draft(row, n, n, f"line {n}"))
        except Exception as err:  # noqa: BLE001 (as line_drafts reports it)
            drafts.append(InputError("f.jsonl", n, getattr(err, "field", None), str(err)))
    ids = Counter(str(d.source_id) for d in drafts if not isinstance(d, InputError) and d.source_id)
    return list(
        finish(
            Path("f.jsonl"), drafts, validate_labels=False, ids=ids, rename=ragbench.source_field
        )
    )


def _same(rows: list[Any]) -> int:
    """Assert both readings agree on ``rows``; how many rows the plain one took."""
    plain = _read(rows, ragbench.draft)
    general = _read(rows, ragbench.general_draft)
    assert len(plain) == len(general)
    for a, b in zip(plain, general, strict=True):
        assert type(a) is type(b)
        if isinstance(a, ImportItem):
            assert a.record == b.record
            # (the views the plain reading hands over are those the record computes)
            assert a.record.sentence_text == b.record.sentence_text
            assert a.record.sentence_chars == b.record.sentence_chars
            assert vars(a.record).keys() == vars(b.record).keys()
            assert dumps(a.record.data) == dumps(b.record.data)
            assert repr(a.record.scores) == repr(b.record.scores)  # (floats as floats)
            assert a.judge == b.judge
            assert [list(t) for t in a.judge.values()] == [list(t) for t in b.judge.values()]
            assert list(a.judge) == list(b.judge)
            assert (a.source, a.own_source) == (b.source, b.own_source)
        else:  # an error or warning: the same words at the same place
            assert (a.path, a.line, a.field, a.message) == (b.path, b.line, b.field, b.message)
    return sum(plain_draft(row, 1, 1, "") is not None for row in rows)


def test_every_fixture_row_reads_the_same_both_ways() -> None:
    rows = _fixture_rows()
    taken = _same(rows)
    assert taken >= 20  # (the bench's rows, and the fixture rows with plain keys)


def _mutate(row: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    changed = copy.deepcopy(row)
    try:
        _change(changed, rng)
    except (TypeError, KeyError, IndexError, AttributeError):  # (an earlier change's shape)
        return row
    return changed


def _change(row: dict[str, Any], rng: random.Random) -> None:
    field = rng.choice(FIELDS)
    how = rng.randrange(9)
    docs = row.get("documents_sentences")
    if how == 0:
        row.pop(field, None)
    elif how == 1:
        row[field] = rng.choice(ODD_VALUES)
    elif how == 2 and docs:  # a key repeated, within a document or across two
        doc = rng.choice(docs)
        if doc:
            other = rng.choice(rng.choice(docs) or doc)
            rng.choice(doc)[0] = other[0]
    elif how == 3 and docs:  # a pair of the wrong length or type
        doc = rng.choice(docs)
        if doc:
            at = rng.randrange(len(doc))
            doc[at] = rng.choice([doc[at][:1], [*doc[at], "x"], [doc[at][0], 5], "ab", {}])
    elif how == 4:  # a label list naming dotted, spaced, unknown or repeated keys
        name = rng.choice(
            ["all_relevant_sentence_keys", "all_utilized_sentence_keys",
             "unsupported_response_sentence_keys"]
        )  # fmt: skip
        keys = list(row.get(name) or [])
        keys.append(rng.choice(["0a.", " 0b ", "zz", "a.", "a", "0a", ""]))
        row[name] = keys
    elif how == 5:  # a support entry of another shape
        support = list(row.get("sentence_support_information") or [{}])
        entry = dict(rng.choice(support)) if support else {}
        key = rng.choice(["response_sentence_key", "supporting_sentence_keys"])
        entry[key] = rng.choice(
            ["a.", "zz", None, 3, ["0a."], ["numerical_reasoning"], ["0a", "0a"], "0a", [7]]
        )
        support.append(entry)
        row["sentence_support_information"] = support
    elif how == 6:  # a score of any JSON type
        row[rng.choice(FIELDS[-4:])] = rng.choice([*ODD_VALUES, 0.1, 1, 10**400])
    elif how == 7 and row.get("response_sentences"):
        response = row["response_sentences"]
        response[rng.randrange(len(response))][0] = rng.choice(["a", "b", 1, None])
    elif how == 8 and docs:  # a document that is not a list, or empty
        docs[rng.randrange(len(docs))] = rng.choice([[], "text", {"sentences": []}, None])


@pytest.mark.parametrize("seed", range(4))
def test_rows_changed_at_random_read_the_same_both_ways(seed: int) -> None:
    rng = random.Random(seed)
    base = _fixture_rows()
    rows = []
    for _ in range(300):
        row = rng.choice(base)
        for _ in range(rng.randint(1, 3)):
            row = _mutate(row, rng)
        rows.append(row)
    rows += [[], "row", 3, None]  # (not an object at all)
    taken = _same(rows)
    assert 0 < taken < len(rows)  # both readings had their share


def test_items_and_records_are_built_with_every_field() -> None:
    """``finish`` builds the ImportItem and the plain reading's Record without their
    ``__init__`` (issue 27): each has every field, equal to what the class builds."""
    items = [i for i in _read(_fixture_rows(), ragbench.draft) if isinstance(i, ImportItem)]
    assert items
    for item in items:
        assert vars(item).keys() == {f.name for f in fields(ImportItem)}
        assert item == ImportItem(**vars(item))
        record_fields = {f.name: getattr(item.record, f.name) for f in fields(Record)}
        assert item.record == Record(**record_fields)
        assert {f.name for f in fields(Record)} <= vars(item.record).keys()


@pytest.mark.parametrize("keys", [["zz", [7]], [[7], "zz"], ["0a", {}], [7, "0a"]])
def test_support_keys_that_are_not_strings_read_the_same_both_ways(keys: list[Any]) -> None:
    """A support entry whose keys hold a non-string after (or before) a key the row
    does not have: the plain reading looks keys up as set.issuperset did, stopping at
    the first one missing, so both ways name the same problem."""
    row = make_row(0, random.Random(3))
    row["sentence_support_information"][0]["supporting_sentence_keys"] = keys
    _same([row])
    (error,) = _read([row], ragbench.draft)
    assert isinstance(error, InputError)
    if keys == ["zz", [7]]:
        assert error.field == "sentence_support_information[0].supporting_sentence_keys"
        assert error.message.endswith(": expected a list of keys")
