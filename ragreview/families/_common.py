"""Small readers the families' judge-reasoning functions share."""

from __future__ import annotations

from typing import Any


def dicts(value: Any) -> list[dict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
