"""MT-RAG: the IDK, answerability and underspecification verdicts and the RAD-Bench
rating of a conversation turn (docs/metrics.md)."""

from __future__ import annotations

from ..core.families import Family, KeyUse
from ..core.labels import ANSWERABILITY, VERDICTS, LabelSpec, Layer
from ..core.metrics import mtrag
from ..core.record import Record


def _evidence(record: Record, labels: Layer) -> bool:
    """A record of no known task: MT-RAG labels, or MT-RAG scores it carries."""
    return any(labels.get(n) for n in mtrag.LABELS) or any(
        n.startswith("mtrag.") for n in record.scores
    )


FAMILY = Family(
    "mtrag",
    "MT-RAG",
    judge_task="idk",  # ragreview judge --task auto
    catalogue=(
        LabelSpec(
            "idk",
            "record",
            "choice",
            "mtrag",
            "'I don't know' verdict: 1 yes, 0 no, 0.5 partial",
            choices=VERDICTS,
            positive=1,  # (0.5 and 0 negative)
        ),
        LabelSpec(
            "underspecified",
            "record",
            "choice",
            "mtrag",
            "underspecified-question verdict: 1 yes, 0 no, 0.5 unsure",
            choices=VERDICTS,
            positive=1,
        ),
        LabelSpec(
            "answerability",
            "record",
            "choice",
            "mtrag",
            "gold answerability of the question",
            choices=ANSWERABILITY,
            positive="ANSWERABLE",
        ),
        LabelSpec("rb_llm_rating", "record", "rating", "mtrag", "RAD-Bench judge rating, 1-10"),
    ),
    keys=(
        KeyUse("cycle-idk", "i", "idk", {"record": "idk"}),
        KeyUse("cycle-answerability", "a", "answerable", {"record": "answerability"}),
        KeyUse("cycle-underspecified", "U", "underspec", {"record": "underspecified"}),
        KeyUse("set-rating", "g", "rating", {"record": "rb_llm_rating"}),
    ),
    item_labels={},
    verdicts=("idk", "answerability", "underspecified", "rb_llm_rating"),
    metrics=("mtrag.",),
    first=("response",),
    counts=("mtrag.length",),
    compute=mtrag.metrics,
    # Length counts the original characters, which sentencizing may not keep
    source_format="mtrag",
    # its lines pack about as small at level 1 as at level 3 (0.323 of the line against
    # 0.317, on the bench's rows) in 60% of the time (29 against 48 us a line);
    # RAGBench's do not (0.227 against 0.189). Packing them at all made an MT-RAG
    # import dearer, not cheaper (SQLite wrote the line whole for less than zstd):
    # this keeps that small (issue 27)
    source_level=1,
    evidence=_evidence,
)
