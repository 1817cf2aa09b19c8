"""Every metric of docs/metrics.md as pure functions of a record and one label layer.

``record_metrics`` gives the public per-record values under their canonical names;
``record_values`` adds the components (names with a ``._`` such as ``rgb._rejection``)
that dataset rates which are not plain means are built from, so that dataset
aggregates can be kept as running sums (see ``aggregate.py``). Which families apply to
a record is the families' own rule (``core.families.metric_families``: its task's, or
for a record of no family's task, those it carries labels, items or scores of); each
family's ``compute`` gives its metrics, ``None`` where undefined.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..families import metric_families, task_family
from ..labels import Layer
from ..record import Record
from .aggregate import Totals, add_values, dataset_values, stored_pairs, undefined_counts
from .common import Values

__all__ = [
    "Totals",
    "add_values",
    "dataset_values",
    "is_public",
    "record_metrics",
    "record_values",
    "source_format",
    "stored_pairs",
    "undefined_counts",
    "with_source",
]


def is_public(name: str) -> bool:
    return "._" not in name


def source_format(record: Record) -> str | None:
    """The format of the source row the record's family's metrics read, if they read it
    (``Family.source_format``: MT-RAG's read the original prediction, targets and
    passages)."""
    family = task_family(record.task)
    return None if family is None else family.source_format


def source_traits(record: Record) -> tuple[str | None, int | None]:
    """``source_format`` and the zstd level the record's family packs its source line
    at (``Family.source_level``; None: the store's own), from one look-up (the importer
    asks both of every record)."""
    family = task_family(record.task)
    return (None, None) if family is None else (family.source_format, family.source_level)


def with_source(record: Record, source: Any) -> Record:
    """The record as its metrics must see it: a family whose metrics read the original
    source row (``source_format``) gets its parsed source object as docs/formats.md's
    ``source`` when the importer kept it aside. Every caller that computes a record's
    metrics (the stored rows, and any writer recomputing them) goes through this, so
    they cannot differ."""
    fmt = source_format(record)
    if fmt is None or not isinstance(source, dict) or "source" in record.data:
        return record
    # a copy with only ``data`` changed: what dataclasses.replace gives (Record has no
    # __post_init__), without its per-field __init__ call (five times the copy; once
    # per MT-RAG record at import, issue 27)
    seen = object.__new__(Record)
    seen.__dict__.update(record.__dict__)
    data = {**record.data, "source": {"format": fmt, "record": source}}
    object.__setattr__(seen, "data", data)
    return seen


def record_values(
    record: Record,
    labels: Layer,
    settings: Mapping[str, Any],
    *,
    judge: Layer | None = None,
    stats: dict[str, Any] | None = None,
) -> Values:
    """Public metrics and aggregate components of every family that applies.

    ``stats``, when given, receives the sufficient statistics of the families whose
    values depend on a setting (``Family.stats``: TRACe, RGB, long-form), from which
    each module's ``values`` gives any variant's values without the record."""
    out: Values = {}
    for family in metric_families(record, labels):
        assert family.compute is not None
        out.update(family.compute(record, labels, settings, judge=judge, into=stats))
    return out


def record_metrics(
    record: Record, labels: Layer, settings: Mapping[str, Any], *, judge: Layer | None = None
) -> dict[str, float | None]:
    """Every applicable per-record metric (docs/metrics.md canonical names) for one label layer.

    ``judge``: the judge layer (also when ``labels`` is that layer), which RAGBench's
    raw label-list counts are relative to; give it to reproduce RAGBench's shipped scores
    exactly (duplicated or unknown keys in its lists count). See ``trace``.
    """
    values = record_values(record, labels, settings, judge=judge)
    return {k: v for k, v in values.items() if is_public(k)}
