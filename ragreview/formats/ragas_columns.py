"""ragas' column names (v1 ``question``/``contexts``/``answer``/``ground_truth``, v2
``user_input``/``retrieved_contexts``/``response``/``reference``) read into the
canonical record: shared by the dataset rows and the annotation export's prompts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.errors import RecordError
from .common import expect, keyed_document, keyed_response, kind


def pick(row: Mapping[str, Any], *names: str) -> str | None:
    return next((n for n in names if n in row), None)


def strings(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RecordError(where, f"expected a list of strings, got {kind(value)}")
    return value


def canonical_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """question, documents, response and references from v1 or v2 names."""
    data: dict[str, Any] = {"task": "ragas"}
    q = pick(row, "user_input", "question")
    if q is not None and row[q] is not None:
        data["question"] = expect(row, q, str)
    c = pick(row, "retrieved_contexts", "contexts")
    contexts = strings(row.get(c), c) if c else []
    data["documents"] = [{"sentences": keyed_document(i, t)} for i, t in enumerate(contexts)]
    a = pick(row, "response", "answer")
    if a is not None and row[a] is not None:
        data["response"] = keyed_response(expect(row, a, str))
    r = pick(row, "reference", "ground_truth", "ground_truths")
    if r is not None:
        data["references"] = strings(row[r], r)
    return data
