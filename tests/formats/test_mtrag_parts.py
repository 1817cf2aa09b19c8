"""The ``Record`` fields an MT-RAG draft builds itself (``Draft.parts``) are the ones the
canonical parser builds from the draft's data (``parse_record``), field for field: on
every MT-RAG fixture row, the bench's rows, and rows changed at random (seeded) in the
ways real files differ (no title, numeric or null document ids, missing and null
fields, non-ASCII text, stored metrics of every JSON type)."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from bench.mtrag_bench import mtrag_rows
from ragreview.core.errors import InputError, RecordError
from ragreview.core.import_items import ImportItem
from ragreview.core.record import Record, parse_record
from ragreview.formats import mtrag
from ragreview.formats.common import finish

from .helpers import FIXTURES, HANDWRITTEN

FILES = [
    *sorted((FIXTURES / "mtrag").glob("*.jsonl")),
    HANDWRITTEN / "mtrag" / "generation_eval_output.jsonl",
]


def _rows() -> list[dict[str, Any]]:
    rows = []
    for path in FILES:
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows + list(mtrag_rows(30))


def _changed(row: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    row = copy.deepcopy(row)
    for ctx in row.get("contexts") or []:
        choice = rng.randrange(6)
        if choice == 0:
            ctx.pop("title", None)
        elif choice == 1:
            ctx["document_id"] = rng.choice([17, None, 2.5, "x"])
        elif choice == 2:
            ctx["title"] = rng.choice([None, 3, "Ünïcode – title"])
        elif choice == 3:
            ctx["text"] = "Der Bär. Ça va? 東京は大きい。はい。 " + ctx.get("text", "")
        elif choice == 4:
            ctx.pop("text", None)
    for turn in row.get("input") or []:
        if rng.random() < 0.3:
            turn.pop(rng.choice(["speaker", "text"]), None)
        elif rng.random() < 0.2:
            turn["speaker"] = rng.choice([None, 4, "agent", "user"])
    if rng.random() < 0.3:
        row.pop(rng.choice(["input", "contexts", "targets", "predictions"]), None)
    if rng.random() < 0.3:
        row["predictions"] = rng.choice([[], [{}], [{"text": ""}], [{"text": "Só isso. Fim."}]])
    if rng.random() < 0.3:
        row["answerability"] = rng.choice([[], None, ["answerable"], "CONVERSATIONAL"])
    if rng.random() < 0.5:
        row["metrics"] = {
            "RB_llm": [rng.choice([0.7, 1, None, float("nan"), True])],
            "idk_eval": [rng.choice([0, 1, 0.5, "unknown"])],
            "BertKPrec": [rng.choice([0.2, None, float("nan")]), 0.4],
            "RL_F": rng.choice([0.5, [3], [], None]),
            "BertscoreR": [rng.choice([0.1, 10**30, -0.0])],
        }
    return row


def _compare(row: dict[str, Any]) -> None:
    try:
        made = mtrag.draft(row, 1, 1, "")
    except RecordError:
        return  # (rejected before any part is built)
    assert made.parts is not None
    (item,) = finish(Path("f.jsonl"), [made], ids=Counter())
    if isinstance(item, InputError):
        with pytest.raises(RecordError):
            parse_record({"id": "1", **made.data})
        return
    assert isinstance(item, ImportItem)
    parsed = parse_record({"id": item.record.id, **made.data})
    for f in fields(Record):
        ours, theirs = getattr(item.record, f.name), getattr(parsed, f.name)
        assert ours == theirs, f.name
        assert type(ours) is type(theirs), f.name
    assert [type(v) for v in item.record.scores.values()] == [
        type(v) for v in parsed.scores.values()
    ]
    for doc, parsed_doc in zip(item.record.documents, parsed.documents, strict=True):
        assert [type(s) for s in doc.sentences] == [type(s) for s in parsed_doc.sentences]


@pytest.mark.parametrize("index", range(len(_rows())))
def test_the_draft_builds_the_parsers_record(index: int) -> None:
    _compare(_rows()[index])


def test_rows_changed_at_random_build_the_parsers_record() -> None:
    rng = random.Random(1127)
    rows = _rows()
    for _ in range(300):
        _compare(_changed(rng.choice(rows), rng))
