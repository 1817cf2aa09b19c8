"""Per-dataset settings (metric variants and parameters), validated against the
variants the families declare (``Family.variants``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.errors import RagreviewError
from ..core.families import variants
from .records import dumps, loads

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils


def metric_settings() -> dict[str, tuple[Any, Any]]:
    """name -> (default, allowed values or a type): the variants every family declares
    (``Family.variants``: trace.variant, rgb.variant, longform.k,
    deepeval.penalize_ambiguous_claims, ...)."""
    return {name: (v.default, v.allowed) for name, v in variants().items()}


# Settings no metric reads (changing them recomputes nothing; not a metric variant, so
# not in ``get_all``): the review-queue stopping rule (docs/estimate.md).
OTHERS: dict[str, tuple[Any, Any]] = {
    "estimate.target_halfwidth": (None, float),
}


def check(name: str, value: Any) -> Any:
    if name == "judge.run":  # not a metric variant: switching rebuilds the judge layer
        raise RagreviewError("judge.run is the active judge run: use `ragreview runs use PATH ID`")
    known = {**metric_settings(), **OTHERS}
    if name not in known:
        raise RagreviewError(f"unknown setting {name!r} (known: {', '.join(known)})")
    _, allowed = known[name]
    if isinstance(allowed, tuple):
        if value not in allowed:
            raise RagreviewError(
                f"{name} must be one of {', '.join(map(str, allowed))}, got {value!r}"
            )
        return value
    if allowed is int:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise RagreviewError(f"{name} must be a positive integer, got {value!r}")
    if allowed is float and value is not None:  # null unsets it
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise RagreviewError(f"{name} must be a positive number or null, got {value!r}")
        return float(value)
    return value


def get_all(db: sqlite_utils.Database, dataset: str) -> dict[str, Any]:
    values = {name: default for name, (default, _) in metric_settings().items()}
    # judge.run (the active judge run) is a setting too, but not a metric variant:
    # `ragreview runs` shows and changes it (store.run_layers)
    for name, value in db.conn.execute(
        "SELECT name, value FROM settings WHERE dataset = ? AND name != 'judge.run'", (dataset,)
    ):
        if name in values:
            values[name] = loads(value)
    return values


def is_set(db: sqlite_utils.Database, dataset: str, name: str) -> bool:
    """Someone set ``name`` on the dataset (by hand or from the file), rather than it
    holding its default."""
    row = db.conn.execute(
        "SELECT 1 FROM settings WHERE dataset = ? AND name = ?", (dataset, name)
    ).fetchone()
    return row is not None


def others(db: sqlite_utils.Database, dataset: str) -> dict[str, Any]:
    """The settings of ``OTHERS``, with their defaults."""
    values = {name: default for name, (default, _) in OTHERS.items()}
    marks = ",".join("?" * len(OTHERS))
    for name, value in db.conn.execute(
        f"SELECT name, value FROM settings WHERE dataset = ? AND name IN ({marks})",
        (dataset, *OTHERS),
    ):
        values[name] = loads(value)
    return values


def store(conn: Any, dataset: str, name: str, value: Any) -> None:
    """Write one (checked) setting in the caller's transaction. Changing a setting
    changes stored metrics: ``metric_writes.put_setting`` is the one way to do it."""
    conn.execute(
        "INSERT INTO settings (dataset, name, value) VALUES (?, ?, ?) "
        "ON CONFLICT (dataset, name) DO UPDATE SET value = excluded.value",
        (dataset, name, dumps(value)),
    )
