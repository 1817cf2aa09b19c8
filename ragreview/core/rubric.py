"""Human metrics a record declares in its own ``rubric`` (InspectorRAGet's fluency,
faithfulness, …; docs/formats.md) as the review screen steps and sums them
(docs/tui.md).

A record's annotators' value of a metric is their aggregate under the metric's own
aggregator (``annotator_agreement.aggregate``: the number ``ragreview agreement``
correlates automatic metrics with). A reviewer's value stands in its place where they
set one, as a human label stands in for the judge's in every other family.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .labels import LabelSpec, declared
from .record import Record

STEPS = 10  # a numerical metric with a range steps by a tenth of it


def metric_names(record: Record) -> tuple[str, ...]:
    """The human metrics the record declares, in the file's order."""
    rubric = record.data.get("rubric")
    if not isinstance(rubric, dict):
        return ()
    return tuple(name for name in rubric if declared(record, name) is not None)


def entry(record: Record, name: str) -> Mapping[str, Any]:
    rubric = record.data.get("rubric")
    found = rubric.get(name) if isinstance(rubric, dict) else None
    return found if isinstance(found, dict) else {}


def as_number(entry: Mapping[str, Any], value: Any) -> float | None:
    """A value as the metric's number: a category's declared ``numeric_value``."""
    if value is None:
        return None
    from .annotator_agreement import numeric_values  # (with the statistics: issue 27)

    numeric = numeric_values(entry)
    if value in numeric:
        return numeric[value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def annotators_value(entry: Mapping[str, Any], values: Sequence[Any]) -> float | None:
    """The annotators' aggregate of one record (None: no value, or InspectorRAGet's
    "Indeterminate" majority)."""
    # (the agreement statistics load only where a record declares metrics: every record
    # opened in the review screen asks which it declares, issue 27: first screen)
    from .annotator_agreement import aggregate, numeric_values

    known = [v for v in values if as_number(entry, v) is not None]
    return aggregate(known, str(entry.get("aggregator") or "average"), numeric_values(entry))


def step(spec: LabelSpec, current: Any, up: bool) -> Any:
    """The next declared value above (``up``) or below ``current``; from no value the
    first (last) one. None at the end of the scale: there is nothing to step to."""
    if spec.kind == "choice":
        choices = spec.choices
        if current not in choices:
            return choices[0] if up else choices[-1]
        index = choices.index(current) + (1 if up else -1)
        return choices[index] if 0 <= index < len(choices) else None
    low, high = spec.bounds or (-math.inf, math.inf)
    size = (high - low) / STEPS if spec.bounds else 1.0
    if current is None:
        start = low if up else high
        return _whole(start if math.isfinite(start) else 0.0)
    new = min(high, current + size) if up else max(low, current - size)
    return None if new == current else _whole(round(new, 10))


def _whole(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def means(rows: Iterable[Mapping[str, float | None]]) -> dict[str, float | None]:
    """Per metric, the mean over the rows that define it (None where none does)."""
    sums: dict[str, list[float]] = {}
    for row in rows:
        for name, value in row.items():
            kept = sums.setdefault(name, [])
            if value is not None:
                kept.append(value)
    return {n: math.fsum(v) / len(v) if v else None for n, v in sums.items()}
