"""Per-dataset settings (metric variants and parameters), validated against DEFAULTS."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.errors import RagreviewError
from .db import write
from .records import dumps, loads

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

# name -> (default, allowed values or a type)
DEFAULTS: dict[str, tuple[Any, Any]] = {
    "trace.variant": ("ragbench", ("ragbench", "length", "capped20")),
    "rgb.variant": ("reference", ("reference", "simple")),
    "longform.k": (100, int),
}


def check(name: str, value: Any) -> Any:
    if name not in DEFAULTS:
        raise RagreviewError(f"unknown setting {name!r} (known: {', '.join(DEFAULTS)})")
    _, allowed = DEFAULTS[name]
    if isinstance(allowed, tuple):
        if value not in allowed:
            raise RagreviewError(
                f"{name} must be one of {', '.join(map(str, allowed))}, got {value!r}"
            )
        return value
    if allowed is int:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise RagreviewError(f"{name} must be a positive integer, got {value!r}")
    return value


def get_all(db: sqlite_utils.Database, dataset: str) -> dict[str, Any]:
    values = {name: default for name, (default, _) in DEFAULTS.items()}
    for name, value in db.conn.execute(
        "SELECT name, value FROM settings WHERE dataset = ?", (dataset,)
    ):
        values[name] = loads(value)
    return values


def put(
    db: sqlite_utils.Database,
    dataset: str,
    name: str,
    value: Any,
    on_progress: Callable[[int], None] | None = None,
) -> bool:
    """Set a dataset setting; returns False when it already had that value.

    A changed setting (a metric variant, K) recomputes every record's stored metrics in
    the same transaction; ``on_progress(n)`` is told as batches of records are done.
    """
    from . import metric_rows

    value = check(name, value)
    with write(db.conn) as conn:
        if get_all(db, dataset)[name] == value:  # stored metrics already use it
            return False
        conn.execute(
            "INSERT INTO settings (dataset, name, value) VALUES (?, ?, ?) "
            "ON CONFLICT (dataset, name) DO UPDATE SET value = excluded.value",
            (dataset, name, dumps(value)),
        )
        rowids = [
            r for (r,) in conn.execute("SELECT rowid FROM records WHERE dataset = ?", (dataset,))
        ]
        # a variant change changes every stored metric
        metric_rows.refresh(db, rowids, on_progress=on_progress)
    return True
