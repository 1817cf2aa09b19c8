"""RAGChecker: the checker's Entailment / Neutral / Contradiction verdict on each claim
against the other answer, and on each claim x retrieved chunk (docs/metrics.md)."""

from __future__ import annotations

from ..core.families import Family, KeyUse
from ..core.labels import ENTAILMENT, LabelSpec
from ..core.metrics import ragchecker

# one key per checker verdict, on a claim (its check against the other answer) or on
# one of its claim x chunk cells, a strip on the claim's row (docs/tui.md)
_TARGETS = {
    "statement": "answer2response",
    "reference_statement": "response2answer",
    "statement_chunk": "retrieved2response",
    "reference_statement_chunk": "retrieved2answer",
}
FAMILY = Family(
    "ragchecker",
    "RAGChecker",
    catalogue=tuple(
        # (positive: RAGChecker's to_bool)
        LabelSpec(
            name, target, "choice", "ragchecker", meaning, choices=ENTAILMENT, positive="Entailment"
        )
        for name, target, meaning in (
            ("answer2response", "statement", "response claim checked against the ground truth"),
            (
                "response2answer",
                "reference_statement",
                "ground-truth claim checked against the response",
            ),
            (
                "retrieved2response",
                "statement_chunk",
                "response claim checked against one retrieved chunk",
            ),
            (
                "retrieved2answer",
                "reference_statement_chunk",
                "ground-truth claim checked against one retrieved chunk",
            ),
        )
    ),
    keys=tuple(
        KeyUse(action, key, word, _TARGETS, value=value)
        for value, action, key, word in (
            ("Entailment", "set-entailment", "Y", "entailed"),
            ("Neutral", "verdict-no", "N", "neutral"),  # (DeepEval's no: the same key)
            ("Contradiction", "set-contradiction", "C", "contradicted"),
        )
    ),
    item_labels={kind: (name,) for kind, name in _TARGETS.items()},
    metrics=("ragchecker.",),
    first=("statement", "reference_statement"),  # each with its cells (tui.model.items_of)
    compute=ragchecker.metrics,
    # (its labels come only with its own files: its keys only for its own records)
    unclaimed=False,
)
