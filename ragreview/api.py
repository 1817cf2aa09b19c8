"""ragreview from Python (notebooks, scripts): docs/python.md.

``ragreview.open(path)`` imports an input file into its review database (the same
``<stem>.ragreview.db`` beside it that the CLI uses) or opens a database, and gives a
``Dataset``: its records, label layers and metrics as lists of dicts or, with
``frame=True``, pandas DataFrames (pandas is optional), plus ``label`` and ``export``.
Opening, labelling, marking and exporting are the use-case functions of
``ragreview.services`` that the CLI and the TUI call, with the same guards.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .core.errors import InputError, RagreviewError
from .core.labels import effective, parse_value_text

if TYPE_CHECKING:
    import sqlite_utils

LAYERS = ("judge", "human", "effective")


def _frame(rows: list[dict[str, Any]]) -> Any:
    try:
        import pandas
    except ImportError:
        raise RagreviewError(
            "frame=True needs pandas (pip install pandas); without it you get lists of dicts"
        ) from None
    return pandas.DataFrame(rows)


@dataclass
class Dataset:
    """One dataset of a review database."""

    db: sqlite_utils.Database
    name: str
    path: Path  # the database file
    errors: builtins.list[InputError] = field(default_factory=list)  # skipped on import
    input_path: Path | None = None  # the file opened, when it was an input (never written)

    # -- reading ------------------------------------------------------------------------

    def _stored(self) -> Iterator[Any]:
        from .store import records as store_records

        return store_records.iterate(self.db, self.name)

    def records(self, frame: bool = False) -> Any:
        """Every record as its canonical JSON object (docs/formats.md) plus ``status``
        and ``reviewed_by``, in file order."""
        rows = [
            {**item.record.data, "id": item.id, "status": item.status,
             "reviewed_by": item.reviewed_by}
            for item in self._stored()
        ]  # fmt: skip
        return _frame(rows) if frame else rows

    def labels(self, layer: str = "effective", frame: bool = False) -> Any:
        """One row per label: ``{"id", "name", "target", "value"}``. ``layer`` is
        ``judge``, ``human`` (overrides), ``effective`` (human over judge) or the name of
        a reviewer whose layer the file or a merge brought (an annotator id)."""
        rows: list[dict[str, Any]] = []
        reviewers = dict(self._reviewer_layers()) if layer not in LAYERS else {}
        if layer not in LAYERS and layer not in reviewers:
            known = ", ".join([*LAYERS, *reviewers])
            raise RagreviewError(f"no label layer {layer!r} (known: {known})")
        for item in self._stored():
            if layer in LAYERS:
                chosen = {
                    "judge": item.judge,
                    "human": item.human,
                    "effective": effective(item.judge, item.human),
                }[layer]
            else:
                chosen = reviewers[layer].get(item.rowid, {})
            for name, targets in chosen.items():
                for target, value in targets.items():
                    rows.append({"id": item.id, "name": name, "target": target, "value": value})
        return _frame(rows) if frame else rows

    def _reviewer_layers(self) -> Iterator[tuple[str, dict[int, dict[str, dict[str, Any]]]]]:
        from .store.label_reads import reviewer_label_layers

        return iter(reviewer_label_layers(self.db, self.name).items())

    def metrics(self, per_record: bool = False, by: str | None = None, frame: bool = False) -> Any:
        """Metrics from the judge's labels and from the reviewed ones, as
        ``ragreview metrics --json`` gives them: one dict for the dataset (a list with
        ``by``: one per group), or per record ``{"id", "dataset", "judge",
        "effective"}``. As a frame: per record one row with ``judge.<metric>`` and
        ``effective.<metric>`` columns; for the dataset one row per metric (and group)."""
        from .store import metric_reads, metric_summary_reads

        if per_record:
            rows = list(metric_reads.iter_record_values(self.db, self.name))
            if not frame:
                return rows
            flat = [
                {"id": r["id"], **{f"{layer}.{k}": v for layer in ("judge", "effective")
                                   for k, v in r[layer].items()}}
                for r in rows
            ]  # fmt: skip
            return _frame(flat)
        summaries = (
            metric_summary_reads.grouped_summaries(self.db, self.name, by)
            if by
            else [metric_summary_reads.dataset_summary(self.db, self.name)]
        )
        if not by:  # the corrected estimates, as `metrics --json` (docs/estimate.md)
            from .services import estimates

            summaries[0]["estimate"] = estimates.dataset_estimates(self.db, self.name)
        if not frame:
            return summaries if by else summaries[0]
        long = [
            {**(s["group"] or {}), "metric": name, "judge": s["judge"].get(name),
             "effective": s["effective"].get(name)}
            for s in summaries
            for name in sorted(s["judge"].keys() | s["effective"].keys())
        ]  # fmt: skip
        return _frame(long)

    # -- writing --------------------------------------------------------------------------

    def label(
        self,
        record_id: str,
        name: str,
        target: str,
        value: Any,
        *,
        reviewer: str | None = None,
        reason: str | None = None,
    ) -> None:
        """Override one label (``value`` None reverts it to the judge's), as
        ``ragreview label``; durable on return. A string value is read as the CLI reads
        VALUE (JSON, or a bare word: ``"NS"``)."""
        from .services import labels

        if isinstance(value, str):
            value = parse_value_text(value)
        labels.label(
            self.db, self.name, record_id, name, target, value, reviewer or _user(), reason=reason
        )

    def mark(self, record_id: str, reviewed: bool = True, *, reviewer: str | None = None) -> None:
        """Mark a record reviewed (or not), as ``ragreview mark``."""
        from .services import labels

        labels.mark(self.db, self.name, record_id, reviewed, reviewer or _user())

    def export(
        self,
        out: str | Path,
        format: str = "source",
        reviewed_only: bool = False,
        *,
        force: bool = False,
        allow_loss: bool = False,
    ) -> int:
        """Write the dataset to ``out`` as ``source`` (its own format), ``ragreview``,
        ``csv``, ``parquet`` or ``disagreements``; the number of records (items for
        ``disagreements``). Guarded like ``ragreview export`` (the same function): never
        over the DB, its WAL or an input file; an existing ``out`` only with
        ``force=True``; written whole or not at all."""
        from .services import export

        inputs = [self.input_path] if self.input_path else []
        return export.export(
            self.db,
            self.name,
            Path(out),
            as_=format,
            reviewed_only=reviewed_only,
            allow_loss=allow_loss,
            force=force,
            inputs=inputs,
            force_word="force=True",
        ).count

    def close(self) -> None:
        self.db.conn.close()

    def __enter__(self) -> Dataset:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "reviewer"


def open(  # noqa: A001 (ragreview.open, like the CLI's `ragreview open`)
    path: str | Path,
    *,
    db: str | Path | None = None,
    dataset: str | None = None,
    format: str | None = None,
    map: str | dict[str, str] | None = None,
    strict: bool = False,
) -> Dataset:
    """The dataset behind ``path``: an input file (imported on first use into
    ``<stem>.ragreview.db`` beside it, or ``db``) or a review database. ``map`` is a
    ``--map`` mapping (text, a TOML file's path, or a dict). Invalid records are skipped
    and kept in ``Dataset.errors``; with ``strict`` any makes it raise, writing nothing."""
    from .formats import mapped
    from .services import opening

    mapping = None
    if isinstance(map, dict):
        mapping = mapped.check(dict(map), "map")
    elif map is not None:
        mapping = mapped.parse_spec(map)
    # the open use case, as `ragreview open` (no worker process: a notebook or a script
    # without a __main__ guard cannot spawn one)
    opened = opening.open_dataset(
        path,
        db,
        dataset,
        fmt=format,
        mapping=mapping,
        strict=strict,
        parallel=False,
        dataset_option="dataset=",
    )
    target = opened.target
    return Dataset(opened.db, opened.dataset, target.db_path, opened.errors, target.input_path)
