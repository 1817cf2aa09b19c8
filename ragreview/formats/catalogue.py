"""The formats: ``ADAPTERS`` is the one list of them (a format is registered by being
named here), and what ``ragreview formats`` lists comes from each adapter's own
``LISTING``; for a file no format accepts, which fields the closest ones miss.

Each adapter's ``LISTING.field_sets`` summarise its ``sniff`` (a record matches a
format when it has every field of one of the format's field sets); docs/formats.md has
the full story.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import (
    csv_export,
    deepeval,
    factscore,
    inspectorraget,
    mapped,
    mtrag,
    native,
    parquet,
    ragas,
    ragbench,
    ragchecker,
    rgb,
    safe,
)
from .base import Adapter

# Order matters for detection: the first adapter whose sniff() accepts wins, and the
# native format goes last because its markers (``labels``) are the most generic.
ADAPTERS: tuple[Adapter, ...] = (
    ragbench,
    rgb,
    mtrag,
    factscore,
    safe,
    ragas,
    inspectorraget,
    deepeval,
    ragchecker,
    native,
    mapped,
)
REGISTRY: dict[str, Adapter] = {a.NAME: a for a in ADAPTERS}

NATIVE = native.NAME  # ragreview's own records: what holds every label
MAPPED = mapped.NAME  # never detected: chosen with --map
CSV = csv_export.NAME  # the metric table, one row per record
PARQUET = parquet.NAME  # the source format's rows, as a parquet file
# Export targets that are no source format (no reader).
EXPORT_ONLY = (CSV, PARQUET)
# What ``export --as`` writes besides its record formats: the records as ragreview
# keeps them, or as these targets.
EXPORT_TARGETS = (NATIVE, *EXPORT_ONLY)
# Shapes other tools read, written from the corrections (services/loop_exports.py);
# the first is the MetricAnnotation file the ragas adapter reads back.
LOOP_TARGETS = ("ragas-annotation", "mlflow-assessments", "fewshot")


def rows() -> list[dict[str, Any]]:
    """One dict per format, for ``ragreview formats`` (and its ``--json``)."""
    return [
        {
            "format": a.NAME,
            "detected_by": a.LISTING.detected_by,
            "needs": [" + ".join(s) for s in a.LISTING.field_sets],
            "reads": a.LISTING.reads,
        }
        for a in ADAPTERS
    ]


def without_rubric() -> frozenset[str]:
    """The formats none of whose records declares human metrics (``Traits``)."""
    return frozenset(a.NAME for a in ADAPTERS if not a.TRAITS.may_declare_rubric)


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
    for order, adapter in enumerate(ADAPTERS):
        best = None
        for fields in adapter.LISTING.field_sets:
            missing = [f for f in fields if f not in keys]
            if len(missing) < len(fields) and (best is None or len(missing) < len(best)):
                best = missing
        if best is not None:
            ranked.append((len(best), order, adapter.NAME, best))
    ranked.sort()
    return [(name, missing) for _, _, name, missing in ranked[:limit]]


def no_match_message(candidates: list[dict[str, Any]], known: Iterable[str]) -> str:
    found = closest(candidates)
    hint = "; ".join(f"{name} misses {', '.join(missing)}" for name, missing in found)
    head = "cannot tell the format of this file"
    tail = "pass --format (" + ", ".join(known) + ") or map your fields with --map"
    return f"{head} (closest: {hint}); {tail}" if hint else f"{head}; {tail}"
