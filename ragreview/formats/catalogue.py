"""What ``ragreview formats`` lists: each format, how it is detected, the fields it
needs; and, for a file no format accepts, which fields the closest ones miss.

The signatures mirror each adapter's ``sniff`` (a record matches a format when it has
every field of one of the format's field sets); docs/formats.md has the full story.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FormatInfo:
    name: str
    detected_by: str
    field_sets: tuple[tuple[str, ...], ...]  # any one set, all of its fields
    reads: str


FORMATS: tuple[FormatInfo, ...] = (
    FormatInfo(
        "ragbench",
        "JSON Lines / parquet rows",
        (("documents_sentences",), ("all_relevant_sentence_keys",)),
        "TRACe labels from the key lists; stored *_score",
    ),
    FormatInfo(
        "rgb",
        "JSON Lines (.json) rows",
        (("query", "prediction"), ("query", "positive", "negative")),
        "rejected, answer parts matched, error detected",
    ),
    FormatInfo(
        "mtrag",
        "JSON Lines / parquet rows",
        (
            ("task_id", "input"),
            ("task_id", "contexts"),
            ("task_id", "targets"),
            ("task_id", "predictions"),
        ),  # fmt: skip
        "answerability, idk, underspecified, RAD-Bench rating; stored metrics",
    ),
    FormatInfo(
        "factscore",
        "JSON Lines rows",
        (("annotations", "human-atomic-facts"),),
        "atomic facts S / NS / IR",
    ),
    FormatInfo(
        "safe",
        "one JSON document",
        (("per_prompt_data",), ("checked_statements",)),
        "atomic facts from annotation",
    ),
    FormatInfo(
        "ragas",
        "JSON Lines / JSON array rows, or a MetricAnnotation export",
        (("user_input", "retrieved_contexts"), ("question", "contexts")),
        "statement, attributed, context-useful verdicts",
    ),
    FormatInfo(
        "inspectorraget",
        "one JSON document (schema v1 or v2)",
        (("tasks", "metrics", "evaluations"), ("tasks", "metrics", "results")),
        "annotators' human metrics as reviewer layers; algorithm metrics as stored scores",
    ),
    FormatInfo(
        "deepeval",
        "one JSON document: a test run (test_run_*.json, .deepeval/*.json)",
        (("testCases",), ("testRunData",)),
        "Faithfulness, Answer Relevancy, Contextual Relevancy / Precision / Recall verdicts "
        "from verboseLogs; every metric's stored score",
    ),
    FormatInfo(
        "ragchecker",
        "one JSON document ({results, metrics})",
        (("results", "retrieved_context", "gt_answer"),),
        "claim-level entailment (answer2response, response2answer, claim x chunk); metrics",
    ),
    FormatInfo(
        "ragreview",
        "JSON Lines / parquet rows",
        (("id", "labels"), ("id", "documents")),
        "everything (ragreview's own records)",
    ),
    FormatInfo(
        "mapped",
        "never: chosen with --map target=path,… (JSON Lines or CSV)",
        (),
        "whatever the mapping names (docs/formats.md)",
    ),
)


def rows() -> list[dict[str, Any]]:
    """One dict per format, for ``ragreview formats`` (and its ``--json``)."""
    return [
        {
            "format": f.name,
            "detected_by": f.detected_by,
            "needs": [" + ".join(s) for s in f.field_sets],
            "reads": f.reads,
        }
        for f in FORMATS
    ]


def _keys(obj: dict[str, Any]) -> set[str]:
    """Top-level keys, and the keys of objects one level down (``annotations`` entries
    hold factscore's ``human-atomic-facts``)."""
    keys = set(obj)
    for value in obj.values():
        items = value if isinstance(value, list) else [value]
        for item in items[:3]:
            if isinstance(item, dict):
                keys |= set(item)
    return keys


def closest(candidates: Iterable[dict[str, Any]], limit: int = 3) -> list[tuple[str, list[str]]]:
    """The formats the records come closest to: (name, missing fields), fewest missing
    first (formats sharing no field with the records are left out)."""
    keys: set[str] = set()
    for obj in candidates:
        keys |= _keys(obj)
    ranked = []
    for order, info in enumerate(FORMATS):
        best = None
        for fields in info.field_sets:
            missing = [f for f in fields if f not in keys]
            if len(missing) < len(fields) and (best is None or len(missing) < len(best)):
                best = missing
        if best is not None:
            ranked.append((len(best), order, info.name, best))
    ranked.sort()
    return [(name, missing) for _, _, name, missing in ranked[:limit]]


def no_match_message(candidates: list[dict[str, Any]], known: Iterable[str]) -> str:
    found = closest(candidates)
    hint = "; ".join(f"{name} misses {', '.join(missing)}" for name, missing in found)
    head = "cannot tell the format of this file"
    tail = "pass --format (" + ", ".join(known) + ") or map your fields with --map"
    return f"{head} (closest: {hint}); {tail}" if hint else f"{head}; {tail}"
