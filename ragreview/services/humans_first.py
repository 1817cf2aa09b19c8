"""Humans first (docs/align.md): before the judge is scored against the reviewers, how
far do the reviewers agree with each other? With two or more human layers (a merged
review), per label: Cohen's κ (two reviewers) or Krippendorff's α (nominal, more),
with a bootstrap interval over records, beside the judge's κ against each reviewer
(averaged); a label is flagged where the humans agree less with each other than the
judge agrees with them: there the "truth" the judge is scored against is itself in
doubt, and sharper guidelines help more than a better judge.

Items follow ``core.label_items`` as ``reviewer_agreement`` does, on raw label values
(nominal), so the human and judge numbers use the same values.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # sqlite_utils imports click's whole CLI machinery: not at run time
    import sqlite_utils

from ..core import label_items
from ..core.agreement import cohen_kappa, percentile
from ..core.labels import CATALOGUE
from ..store.merge_reads import reviewers
from .merging import reviewer_views

LEVEL = 0.95


def _units(views: Sequence[tuple[Any, dict, list]]) -> dict[str, list[tuple[int, Any, list]]]:
    """Per label: (record index, judge value, each reviewer's value or None) of every
    item two reviewers or more gave a value."""
    out: dict[str, list[tuple[int, Any, list]]] = {}
    for index, (record, judge, layers) in enumerate(views):
        present = [layer for layer in layers if layer is not None]
        if len(present) < 2:
            continue
        for name in CATALOGUE:
            if not label_items.applies(record, name, present):
                continue
            given = [{} if lay is None else label_items.values(record, lay, name) for lay in layers]
            judged = label_items.values(record, judge, name)
            items: dict[label_items.Item, None] = {}
            for values in given:
                items.update(dict.fromkeys(values))
            for item in items:
                row = [label_items.hashable(v[item]) if item in v else None for v in given]
                if sum(v is not None for v in row) >= 2:
                    j = judged.get(item)
                    out.setdefault(name, []).append(
                        (index, None if j is None else label_items.hashable(j), row)
                    )
    return out


def _alpha(coincidence: dict[tuple[Hashable, Hashable], float]) -> float | None:
    totals: defaultdict[Hashable, float] = defaultdict(float)  # (weights, not counts)
    for (a, _), w in coincidence.items():
        totals[a] += w
    n = sum(totals.values())
    observed = sum(w for (a, b), w in coincidence.items() if a != b)
    expected = n * n - sum(t * t for t in totals.values())
    if n <= 1 or expected <= 1e-12:
        return None
    return 1 - (n - 1) * observed / expected


def _kappa(pairs: dict[tuple[Hashable, Hashable], float]) -> float | None:
    n = sum(pairs.values())
    if n == 0:
        return None
    left: defaultdict[Hashable, float] = defaultdict(float)  # (weights, not counts)
    right: defaultdict[Hashable, float] = defaultdict(float)
    for (a, b), w in pairs.items():
        left[a] += w
        right[b] += w
    observed = sum(w for (a, b), w in pairs.items() if a == b) / n
    expected = sum(left[c] * right[c] for c in left) / (n * n)
    if expected >= 1 - 1e-12:
        return None
    return (observed - expected) / (1 - expected)


def _cells(row: list, two: bool) -> dict[tuple[Hashable, Hashable], float]:
    """One item's contribution: its (a, b) pair for κ, its coincidences for α."""
    values = [v for v in row if v is not None]
    if two:
        return {(row[0], row[1]): 1.0} if row[0] is not None and row[1] is not None else {}
    m = len(values)
    out: dict[tuple[Hashable, Hashable], float] = {}
    for i, a in enumerate(values):
        for j, b in enumerate(values):
            if i != j:
                out[(a, b)] = out.get((a, b), 0.0) + 1 / (m - 1)
    return out


def build(
    db: sqlite_utils.Database, dataset: str, *, seed: int, resamples: int
) -> dict[str, Any] | None:
    """The ``humans_first`` block, or None when the dataset has fewer than two human
    layers."""
    sources = reviewers(db)
    if len(sources) < 2:
        return None
    import numpy as np

    views = reviewer_views(db, dataset)
    two = len(sources) == 2
    statistic = _kappa if two else _alpha
    units = _units(views)
    n_records = len(views)
    labels: dict[str, Any] = {}
    for name in label_items.label_names([units]):
        rows = units[name]
        cells = [_cells(row, two) for _, _, row in rows]
        keys = sorted({k for c in cells for k in c}, key=repr)
        column = {k: i for i, k in enumerate(keys)}
        # per record, the summed contribution of its items: resampling records is a
        # weighted sum of these rows
        matrix = np.zeros((n_records, len(keys)))
        for (index, _, _), c in zip(rows, cells):
            for k, w in c.items():
                matrix[index, column[k]] += w
        value = statistic(dict(zip(keys, matrix.sum(axis=0).tolist())))
        drawn = []
        records = sorted({index for index, _, _ in rows})
        if value is not None and records:
            rng = np.random.default_rng(seed)
            picks = np.asarray(records)
            for _ in range(resamples):
                chosen = picks[rng.integers(0, len(picks), size=len(picks))]
                totals = matrix[chosen].sum(axis=0)
                got = statistic(dict(zip(keys, totals.tolist())))
                if got is not None:
                    drawn.append(got)
        drawn.sort()
        tail = (1 - LEVEL) / 2
        judge = [
            cohen_kappa([(j, row[r]) for _, j, row in rows if j is not None and row[r] is not None])
            for r in range(len(sources))
        ]
        defined = [k for k in judge if k is not None]
        judge_kappa = sum(defined) / len(defined) if defined else None
        labels[name] = {
            "items": len(rows),
            "statistic": "kappa" if two else "alpha",
            "value": value,
            "ci_low": percentile(drawn, tail) if drawn else None,
            "ci_high": percentile(drawn, 1 - tail) if drawn else None,
            "judge_kappa": judge_kappa,
            "judge_kappa_by_reviewer": dict(zip((who for _, who in sources), judge)),
            "humans_below_judge": value is not None
            and judge_kappa is not None
            and value < judge_kappa,
        }
    return {
        "reviewers": [who for _, who in sources],
        "records": len({i for rows in units.values() for i, _, _ in rows}),
        "labels": labels,
        "bootstrap": {"seed": seed, "resamples": resamples, "level": LEVEL},
    }
