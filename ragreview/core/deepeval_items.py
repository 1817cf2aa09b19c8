"""DeepEval's verdict-bearing items as a canonical record keeps them (docs/formats.md).

A DeepEval test case's verdicts live in each metric's ``verboseLogs``; the adapter
(``formats.deepeval``) lays them out in the record's ``deepeval`` field as keyed items,
one list per item kind, each entry ``[key, text, concerns]`` (``concerns``: the
retrieval node it is about, or null). Contextual Precision's verdicts are one per
retrieval node, keyed as the record's contexts (``c0``, ``c1``, … in rank order).
This module knows that layout and nothing else, so ``record`` may ask it for targets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

VERDICTS = ("yes", "no", "idk")

# item kind -> (label, key prefix, what one item is)
KINDS: dict[str, tuple[str, str, str]] = {
    "claim": ("deepeval_claim", "cl", "claim of the output (Faithfulness)"),
    "answer_statement": ("deepeval_statement", "as", "statement of the output (Answer Relevancy)"),
    "context_statement": (
        "deepeval_context_statement",
        "n",
        "statement of a retrieval node (Contextual Relevancy)",
    ),
    "expected_sentence": (
        "deepeval_expected",
        "e",
        "sentence of the expected output (Contextual Recall)",
    ),
    # one per retrieval node, keyed as the record's contexts (c0, c1, … in rank order) and
    # shown on the document rows; only where the test case has Contextual Precision
    "node": ("deepeval_node", "c", "retrieval node (Contextual Precision)"),
}
NODE_LABEL = "deepeval_node"

# metric slug -> (DeepEval's metric name, label, item kind)
METRICS: dict[str, tuple[str, str, str]] = {
    "faithfulness": ("Faithfulness", "deepeval_claim", "claim"),
    "answer_relevancy": ("Answer Relevancy", "deepeval_statement", "answer_statement"),
    "contextual_relevancy": (
        "Contextual Relevancy",
        "deepeval_context_statement",
        "context_statement",
    ),
    "contextual_precision": ("Contextual Precision", NODE_LABEL, "node"),
    "contextual_recall": ("Contextual Recall", "deepeval_expected", "expected_sentence"),
}
SLUG_OF_NAME = {name: slug for slug, (name, _, _) in METRICS.items()}
PENALIZE = "deepeval.penalize_ambiguous_claims"  # FaithfulnessMetric's default: False


def item_key(kind: str, index: int, node: int | None = None) -> str:
    prefix = KINDS[kind][1]
    if kind == "node":  # the record's context key
        return f"{prefix}{index}"
    if kind == "context_statement":
        return f"{prefix}{node}s{index + 1}"
    return f"{prefix}{index + 1}"


def entries(data: Mapping[str, Any], kind: str) -> list[list[Any]]:
    """The record's ``[key, text, concerns]`` items of one kind (empty when none)."""
    block = data.get("deepeval")
    items = block.get("items") if isinstance(block, dict) else None
    found = items.get(kind) if isinstance(items, dict) else None
    return (
        [e for e in found if isinstance(e, list) and len(e) >= 2] if isinstance(found, list) else []
    )


def keys(data: Mapping[str, Any], kind: str) -> tuple[str, ...]:
    return tuple(str(e[0]) for e in entries(data, kind))


def metric_entries(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per metric of the test case, in the file's order (see formats.deepeval)."""
    block = data.get("deepeval")
    found = block.get("metrics") if isinstance(block, dict) else None
    return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []
