"""DeepEval: the yes / no / idk verdicts behind Faithfulness, Answer Relevancy and the
contextual metrics, one per claim, statement, node or expected sentence."""

from __future__ import annotations

from typing import Any

from ..core.families import Family, KeyUse, Reasons, Variant
from ..core.labels import DEEPEVAL_VERDICTS, LabelSpec, Layer
from ..core.metrics import deepeval
from ..core.record import Record


def _reasons(rec: Record, src: Any) -> Reasons:
    """Each verdict's reason from the metric's ``verboseLogs``; Faithfulness's truths
    and every verdict metric's own ``reason`` at the record level."""
    from ..core.deepeval_reasons import reasons  # only for DeepEval records

    return reasons(rec, src)


def _ranks_nodes(rec: Record) -> bool:
    """The test case has Contextual Precision verdicts (its document rows take them)."""
    return bool(rec.targets("node"))


def _never(record: Record, labels: Layer) -> bool:
    return False  # only records of its own task (its files set it)


_ITEMS = {
    "claim": "deepeval_claim",
    "answer_statement": "deepeval_statement",
    "context_statement": "deepeval_context_statement",
    "expected_sentence": "deepeval_expected",
}
FAMILY = Family(
    "deepeval",
    "DeepEval",
    catalogue=tuple(
        LabelSpec(
            name,
            target,
            "choice",
            "deepeval",
            f"DeepEval verdict on a {what}: " + ", ".join(choices),
            choices=choices,
            positive="yes",
        )
        for name, target, what, choices in (
            ("deepeval_claim", "claim", "claim of the output (Faithfulness)", DEEPEVAL_VERDICTS),
            (
                "deepeval_statement",
                "answer_statement",
                "statement of the output (Answer Relevancy)",
                DEEPEVAL_VERDICTS,
            ),
            (
                "deepeval_context_statement",
                "context_statement",
                "statement of a retrieval node (Contextual Relevancy)",
                DEEPEVAL_VERDICTS[:2],
            ),
            (
                "deepeval_node",
                "node",
                "retrieval node, in rank order (Contextual Precision)",
                DEEPEVAL_VERDICTS[:2],
            ),
            (
                "deepeval_expected",
                "expected_sentence",
                "sentence of the expected output (Contextual Recall)",
                DEEPEVAL_VERDICTS[:2],
            ),
        )
    ),
    keys=tuple(
        use
        for value, key in (("yes", "y"), ("no", "N"))
        for use in (
            KeyUse(f"verdict-{value}", key, value, _ITEMS, value=value),
            KeyUse(f"verdict-{value}", key, value, {"doc": "deepeval_node"}, _ranks_nodes, value),
        )
    )
    # idk only where DeepEval's schema has it (YesNoBorderline): claims, output statements
    + (
        KeyUse(
            "verdict-idk",
            "I",
            "idk",
            {k: _ITEMS[k] for k in ("claim", "answer_statement")},
            value="idk",
        ),
    ),
    item_labels={"doc": ("deepeval_node",)} | {kind: (label,) for kind, label in _ITEMS.items()},
    metrics=("deepeval.",),
    settings=("deepeval.penalize_ambiguous_claims",),
    first=("claim", "answer_statement", "context_statement", "expected_sentence"),
    reasons=_reasons,
    compute=deepeval.metrics,
    evidence=_never,
    # (DeepEval's keys act on documents too: only for its own records)
    unclaimed=False,
    # FaithfulnessMetric(penalize_ambiguous_claims=False) by default; no file records it
    # (no stats: a change recomputes the records)
    variants=(Variant("deepeval.penalize_ambiguous_claims", False, (False, True)),),
)
