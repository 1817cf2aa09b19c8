"""``agreement --runs``: every judge run scored against the same human labels
(docs/agreement.md, Judge runs).

The truth is what the main report uses: the reviewed layer of each reviewed record
(the reviewer's override, else the active judge label the reviewer accepted) and
its stored effective metrics. Each run is the prediction on the reviewed records it
labelled; its metrics are computed from its own labels, as the judge layer's are.
The statistics are the main report's (``agreement_report.label_agreement`` and
``metric_agreement``), so the active run's row equals the main report where the
active run labelled every reviewed record.
"""

from __future__ import annotations

from typing import Any

import sqlite_utils

from ..core import agreement_report, metrics
from ..core.labels import effective
from ..store import metric_reads, metric_writes, review_queries, run_layers
from ..store import records as store_records
from ..store import settings as store_settings


def build(
    db: sqlite_utils.Database,
    dataset: str,
    *,
    seed: int,
    resamples: int,
    all_reviewed: bool = False,
) -> dict[str, Any]:
    metric_writes.ensure(db, dataset)
    sample = review_queries.latest_sample(db, dataset)
    only = None if sample is None or all_reviewed else set(sample.members)
    stored = [
        s
        for s in store_records.iterate(db, dataset, status="reviewed")
        if only is None or s.rowid in only
    ]
    rowids = [s.rowid for s in stored]
    truth = {s.rowid: effective(s.judge, s.human) for s in stored}
    truth_metrics = {r: v["effective"] for r, v in metric_reads.records_values(db, rowids).items()}
    settings = store_settings.get_all(db, dataset)
    out_runs = []
    for run in run_layers.runs(db, dataset):
        layers = run_layers.layers(db, dataset, run["id"], rowids)
        mine = [s for s in stored if s.rowid in layers]
        labels, multiclass, _ = agreement_report.label_agreement(
            (s.record, layers[s.rowid], truth[s.rowid]) for s in mine
        )
        per_record = []
        # RAGBench's raw list lengths describe the imported labels: only the import
        # run's metrics count them (as metric_writes.refresh does for the judge layer)
        imported = run["id"] == run_layers.import_run_id(dataset)
        for s in mine:
            record = metric_writes._with_source(s.record, s.source)  # as the stored rows
            listed = layers[s.rowid] if imported else None
            values = metrics.record_values(record, layers[s.rowid], settings, judge=listed)
            reviewed = truth_metrics[s.rowid]
            per_record.append(({k: v for k, v in values.items() if k in reviewed}, reviewed))
        out_runs.append(
            {
                "id": run["id"],
                "model": run["model"],
                "mode": run["mode"],
                "prompt_hash": run["prompt_hash"],
                "params": run["params"],
                "started": run["started"],
                "active": run["active"],
                "records": len(mine),
                "labels": labels,
                "multiclass": multiclass,
                "metrics": agreement_report.metric_agreement(per_record, seed, resamples),
            }
        )
    warnings = []
    if not stored:
        warnings.append("no record is marked reviewed: nothing to compare")
    elif any(not r["active"] for r in out_runs):
        warnings.append(
            "a reviewed label left alone counts as the reviewer accepting the active run's "
            "value: the active run is favoured unless the reviewer set the labels"
        )
    return {
        "dataset": dataset,
        "records": len(stored),
        "active": run_layers.active(db, dataset),
        "runs": out_runs,
        "bootstrap": {"seed": seed, "resamples": resamples, "level": 0.95},
        "warnings": warnings,
    }
