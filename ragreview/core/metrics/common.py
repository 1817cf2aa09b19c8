"""Small helpers shared by the metric families."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..labels import Layer
from ..record import Record

Values = dict[str, float | None]


class MetricFunction(Protocol):
    """The one signature of every family's per-record metrics (``Family.compute``).

    ``judge``: the imported judge layer, which some counts are relative to (TRACe's
    raw RAGBench lists); ``into``, when given, receives the family's sufficient
    statistics (``Family.stats``), from which a variant's values follow without the
    record (``store.metric_stats_writes``). A family without either ignores them."""

    def __call__(
        self,
        record: Record,
        labels: Layer,
        settings: Mapping[str, Any],
        *,
        judge: Layer | None = None,
        into: dict[str, Any] | None = None,
    ) -> Values: ...


def flag(value: Any) -> float:
    """A label value as RGB-style 0/1 (absent or false -> 0.0)."""
    return 1.0 if value is True or value == 1 else 0.0


def has_any(labels: Layer, names: tuple[str, ...]) -> bool:
    return any(labels.get(n) for n in names)


def source_record(record: Record, fmt: str) -> Mapping[str, Any] | None:
    """The original source object (docs/formats.md ``source``) when it came from ``fmt``."""
    source = record.data.get("source")
    if isinstance(source, Mapping) and source.get("format") == fmt:
        inner = source.get("record")
        if isinstance(inner, Mapping):
            return inner
    return None


def setting(settings: Mapping[str, Any], name: str, default: Any) -> Any:
    value = settings.get(name)
    return default if value is None else value
