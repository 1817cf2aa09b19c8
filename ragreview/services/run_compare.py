"""Two judge runs compared on the same reviewed records, and a judge against its own
repeat (docs/align.md). Adds the ``paired`` and ``self_agreement`` blocks to the
``agreement --runs`` report.

The truth is the one ``run_report`` uses (the reviewed layer and the stored effective
metrics of the reviewed records of the latest sample). A record counts in the paired
comparison when both runs labelled it, so both runs are scored on the same records.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # sqlite_utils imports click's whole CLI machinery: not at run time
    import sqlite_utils

from ..core import agreement_report, label_items, metrics
from ..core.agreement import confusion_of_counts
from ..core.errors import RagreviewError
from ..core.labels import Layer, effective
from ..core.record import Record
from ..store import metric_reads, metric_writes, review_queries, run_layers
from ..store import records as store_records
from ..store import settings as store_settings
from . import paired

REPEAT_OF = "repeat_of"  # run parameter naming the run a `judge --repeat` run repeats


def record_counts(record: Record, judge: Layer, truth: Layer) -> dict[str, paired.Counts]:
    """Per label, the record's binary confusion counts (the items ``agreement`` counts)."""
    tally = agreement_report.LabelTally()
    tally.add(record, judge, truth)
    out = {}
    for name, got in tally.pairs.items():
        binary: Counter[tuple[bool, bool]] = Counter()
        for (j, h), k in got.items():
            binary[(label_items.binary(name, j), label_items.binary(name, h))] += k
        c = confusion_of_counts(binary)
        if c.n:
            out[name] = (c.tp, c.fp, c.fn, c.tn)
    return out


def _rows(per_record: list[dict[str, paired.Counts]]) -> dict[str, list[paired.Counts]]:
    """Per label, one row per record (zeros where the label has no item there)."""
    names = label_items.label_names([set().union(*per_record)] if per_record else [])
    return {name: [counts.get(name, (0, 0, 0, 0)) for counts in per_record] for name in names}


def default_pair(runs: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(base, candidate): the latest run that is not a repeat against the active run,
    or against the run before it when the latest is the active one."""
    firsts = [r for r in runs if not r["params"].get(REPEAT_OF)]
    if len(firsts) < 2:
        return None
    candidate = firsts[-1]
    active = next((r for r in firsts if r["active"]), None)
    if active is None or active["id"] == candidate["id"]:
        return firsts[-2]["id"], candidate["id"]
    return active["id"], candidate["id"]


def compare(
    db: sqlite_utils.Database,
    dataset: str,
    base: str,
    candidate: str,
    *,
    seed: int,
    resamples: int,
    all_reviewed: bool = False,
) -> dict[str, Any]:
    """The ``paired`` block: candidate − base per label (κ, TPR, TNR) and per metric
    (|bias|), each with its paired bootstrap interval and verdict."""
    if base == candidate:
        raise RagreviewError("compare two different runs")
    metric_writes.ensure(db, dataset)
    sample = review_queries.latest_sample(db, dataset)
    only = None if sample is None or all_reviewed else set(sample.members)
    stored = [
        s
        for s in store_records.iterate(db, dataset, status="reviewed")
        if only is None or s.rowid in only
    ]
    rowids = [s.rowid for s in stored]
    a = run_layers.layers(db, dataset, base, rowids)
    b = run_layers.layers(db, dataset, candidate, rowids)
    both = [s for s in stored if s.rowid in a and s.rowid in b]
    truth = {s.rowid: effective(s.judge, s.human) for s in both}
    a_counts = [record_counts(s.record, a[s.rowid], truth[s.rowid]) for s in both]
    b_counts = [record_counts(s.record, b[s.rowid], truth[s.rowid]) for s in both]
    names = set().union(*a_counts, *b_counts) if both else set()
    a_rows = {n: [c.get(n, (0, 0, 0, 0)) for c in a_counts] for n in names}
    b_rows = {n: [c.get(n, (0, 0, 0, 0)) for c in b_counts] for n in names}
    ordered = label_items.label_names([names])
    labels = paired.compare_labels(
        {n: a_rows[n] for n in ordered}, {n: b_rows[n] for n in ordered}, seed, resamples
    )

    reviewed = {
        r: v["effective"]
        for r, v in metric_reads.records_values(db, [s.rowid for s in both]).items()
    }
    settings = store_settings.get_all(db, dataset)
    triples: dict[str, list[tuple[float, float, float]]] = {}
    for s in both:
        record = metric_writes._with_source(s.record, s.source)  # as the stored rows are
        va = metrics.record_values(record, a[s.rowid], settings, judge=a[s.rowid])
        vb = metrics.record_values(record, b[s.rowid], settings, judge=b[s.rowid])
        for name, truth_value in reviewed[s.rowid].items():
            x, y, t = (_number(v) for v in (va.get(name), vb.get(name), truth_value))
            if x is not None and y is not None and t is not None:
                triples.setdefault(name, []).append((x, y, t))
    warnings = []
    if len(both) < agreement_report.MIN_METRIC_RECORDS:
        warnings.append(
            f"only {len(both)} reviewed records were judged by both runs: the intervals "
            'are wide and a verdict of "can\'t tell" is likely'
        )
    return {
        "base": base,
        "candidate": candidate,
        "records": len(both),
        "labels": labels,
        "metrics": paired.compare_metrics(dict(sorted(triples.items())), seed, resamples),
        "warnings": warnings,
    }


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def self_agreement(
    db: sqlite_utils.Database,
    dataset: str,
    runs: list[dict[str, Any]],
    *,
    seed: int,
    resamples: int,
) -> list[dict[str, Any]]:
    """Per pair (run, its repeat): judge-vs-itself κ per label over every record both
    labelled (no human needed), with its bootstrap interval over records."""
    known = {r["id"] for r in runs}
    pairs = [(r["params"][REPEAT_OF], r["id"]) for r in runs if r["params"].get(REPEAT_OF) in known]
    if not pairs:
        return []
    stored = list(store_records.iterate(db, dataset))
    rowids = [s.rowid for s in stored]
    out = []
    for first, repeat in pairs:
        a = run_layers.layers(db, dataset, first, rowids)
        b = run_layers.layers(db, dataset, repeat, rowids)
        per_record = [
            record_counts(s.record, a[s.rowid], b[s.rowid])
            for s in stored
            if s.rowid in a and s.rowid in b
        ]
        out.append(
            {
                "run": first,
                "repeat": repeat,
                "records": len(per_record),
                "labels": paired.self_agreement(_rows(per_record), seed, resamples),
            }
        )
    return out


def extend(
    report: dict[str, Any],
    db: sqlite_utils.Database,
    dataset: str,
    *,
    base: str | None,
    candidate: str | None,
    seed: int,
    resamples: int,
    all_reviewed: bool,
) -> None:
    """Add ``paired`` (None with fewer than two runs to compare) and
    ``self_agreement`` (with each repeat's judge-vs-human κ beside it) to a
    ``run_report`` report."""
    runs = run_layers.runs(db, dataset)
    if base or candidate:
        default = default_pair(runs)
        base = run_layers.resolve(db, dataset, base) if base else (default or (None, None))[0]
        candidate = (
            run_layers.resolve(db, dataset, candidate)
            if candidate
            else (default or (None, None))[1]
        )
        if base is None or candidate is None:
            raise RagreviewError("give both --base and --candidate: no default pair of runs")
        pair: tuple[str, str] | None = (base, candidate)
    else:
        pair = default_pair(runs)
    report["paired"] = (
        None
        if pair is None
        else compare(db, dataset, *pair, seed=seed, resamples=resamples, all_reviewed=all_reviewed)
    )
    by_id = {r["id"]: r for r in report["runs"]}
    blocks = self_agreement(db, dataset, runs, seed=seed, resamples=resamples)
    for block in blocks:
        human = by_id.get(block["run"], {}).get("labels", {})
        for name, stats in block["labels"].items():
            stats["kappa_vs_human"] = human.get(name, {}).get("kappa")
    report["self_agreement"] = blocks
