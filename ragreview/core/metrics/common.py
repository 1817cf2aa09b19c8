"""Small helpers shared by the metric families."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..labels import Layer
from ..record import Record

Values = dict[str, float | None]


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
