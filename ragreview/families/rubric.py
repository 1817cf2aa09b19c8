"""The human metrics an InspectorRAGet record declares (``core.rubric``): its keys act
on the metric chosen with `w`, not on one fixed label (``RUBRIC_LABEL``); the labels
and their value sets come with each record, so the family declares none."""

from __future__ import annotations

from ..core.families import RUBRIC_LABEL, Family, KeyUse
from ..core.record import Record


def _declares_rubric(rec: Record) -> bool:
    # (imported here: core.rubric brings the annotator-agreement statistics, which
    # `import ragreview` and most commands never need)
    from ..core import rubric

    return bool(rubric.metric_names(rec))


FAMILY = Family(
    "rubric",
    "InspectorRAGet rubric",
    keys=(
        KeyUse("next-metric", "w", "metric", {"record": RUBRIC_LABEL}),
        KeyUse("step-up", "+", "higher (from none: lowest)", {"record": RUBRIC_LABEL}),
        KeyUse("step-down", "-", "lower", {"record": RUBRIC_LABEL}),
    ),
    item_labels={},
    metrics=("rubric.",),
    first=("response",),
    claims=_declares_rubric,
)
