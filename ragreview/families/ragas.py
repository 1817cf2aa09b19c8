"""ragas: faithfulness statements, attributed reference statements, useful contexts,
and the pass/fail verdict of its annotation export (docs/metrics.md)."""

from __future__ import annotations

import json
from typing import Any

from ..core.families import Family, KeyUse, Reasons
from ..core.keys import context_key, reference_statement_key, statement_key
from ..core.labels import LabelSpec, Layer
from ..core.metrics import ragas
from ..core.record import Record
from ._common import dicts, text


def _annotated(rec: Record) -> bool:
    return "ragas_metric" in rec.data


def _reasons(rec: Record, src: Any) -> Reasons:
    if not isinstance(src, dict):
        return {}
    out: Reasons = {}
    for column, name, key in (
        ("statements", "statement", statement_key),
        ("classifications", "attributed", reference_statement_key),
        ("context_precision_verdicts", "context_useful", context_key),
    ):
        value = src.get(column)
        if isinstance(value, str):  # ragas' CSV export keeps these as JSON text
            try:
                value = json.loads(value)
            except ValueError:
                value = None
        for i, entry in enumerate(dicts(value)):
            if why := text(entry.get("reason")):
                out[(name, key(i))] = why
    for prompt in (
        (src.get("prompts") or {}).values() if isinstance(src.get("prompts"), dict) else ()
    ):
        output = prompt.get("prompt_output") if isinstance(prompt, dict) else None
        if isinstance(output, dict) and (why := text(output.get("reason"))):
            out[("verdict", "*")] = why
    return out


def _evidence(record: Record, labels: Layer) -> bool:
    """A record of no known task: ragas' statements, or a ragas label."""
    return bool(record.statements or record.reference_statements) or any(
        labels.get(n) for n in ragas.LABELS
    )


def _has_statements(record: Record) -> bool:
    # a ragas context verdict repeats on every sentence of a document: only where the
    # record has ragas' statements
    return bool(record.statements or record.reference_statements)


FAMILY = Family(
    "ragas",
    "ragas",
    catalogue=(
        LabelSpec(
            "statement",
            "statement",
            "bool",
            "ragas",
            "faithfulness verdict: the statement follows from the contexts",
        ),
        LabelSpec(
            "attributed",
            "reference_statement",
            "bool",
            "ragas",
            "context-recall verdict: the reference statement is attributable",
        ),
        LabelSpec(
            "context_useful",
            "context",
            "bool",
            "ragas",
            "context-precision verdict: the retrieved context is useful",
        ),
        LabelSpec(
            "verdict",
            "record",
            "bool",
            "ragas",
            # Not in docs/architecture.md: ragas' annotation export (MetricAnnotation) carries one
            # pass/fail verdict per sample, which reviews must be able to correct.
            "a ragas metric's pass/fail verdict on the sample (aspect critics; the "
            "verdict ragas' MetricAnnotation export accepts or edits)",
        ),
    ),
    keys=(
        # one pass/fail verdict per sample: ragas' annotation export (MetricAnnotation)
        KeyUse("toggle-verdict", "v", "verdict", {"record": "verdict"}, _annotated),
        KeyUse(
            "toggle-supported",
            "s",
            "statement",
            {"statement": "statement", "reference_statement": "attributed"},
        ),
        KeyUse("toggle-context-useful", "c", "context", {"doc": "context_useful"}),
    ),
    item_labels={
        "doc": ("context_useful",),
        "statement": ("statement",),
        "reference_statement": ("attributed",),
    },
    verdicts=("verdict",),
    metrics=("ragas.",),
    first=("statement", "reference_statement"),
    editable=("statement", "reference_statement"),
    reasons=_reasons,
    compute=ragas.metrics,
    evidence=_evidence,
    unclaimed=_has_statements,
)
