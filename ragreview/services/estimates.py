"""The corrected headline numbers of a dataset from its latest review draw
(docs/estimate.md): what ``metrics --json``, the agreement report and the TUI show.

Per metric that is a mean of record values: the judge's values over every record where
the metric is defined (the running sums), corrected by the reviewed records of the
draw, each weighted by its inclusion probability (``core.estimate``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..core import estimate as core_estimate
from ..core import sampling
from ..core.families import FAMILIES
from ..store import browse, estimate_reads, metric_writes, review_draws, settings

if TYPE_CHECKING:
    import sqlite_utils


def estimated_names(sums: dict[str, tuple[int, float]], variant: dict[str, Any]) -> dict[str, str]:
    """Metric -> the per-record value it is the mean of (itself, or a rate's component)."""
    out = {name: name for name, (n, _) in sums.items() if "._" not in name and n > 0}
    rates = dict(core_estimate.MEAN_RATES)
    if variant.get("rgb.variant") == "simple":
        rates.update(core_estimate.SIMPLE_RATES)
    for rate, component in rates.items():
        if sums.get(component, (0, 0.0))[0] > 0:
            out[rate] = component
    return dict(sorted(out.items()))


def counted() -> frozenset[str]:
    """The metrics that count (a number of items, not a rate): no review target for them.
    Read when asked, so a family registered later counts too."""
    return frozenset(name for family in FAMILIES for name in family.counts)


def _null() -> dict[str, Any]:
    return {"estimate": None, "ci": None, "n_used": 0, "lambda": None, "halfwidth": None,
            "more_reviews": None}  # fmt: skip


def dataset_estimates(
    db: sqlite_utils.Database, dataset: str, target: float | None = None
) -> dict[str, Any]:
    """The ``estimate`` block: the draw, its review progress, and per metric ``estimate``,
    ``ci`` [lo, hi], ``n_used`` (null where undefined), ``halfwidth`` and, for the
    ``target`` half-width (default: the dataset setting), ``more_reviews``."""
    metric_writes.ensure(db, dataset)
    variant = settings.get_all(db, dataset)
    return estimate_block(db, dataset, variant, browse.reviewed_count(db, dataset), target)


def estimate_block(
    db: sqlite_utils.Database,
    dataset: str,
    variant: dict[str, Any],
    reviewed: int,
    target: float | None = None,
    records: int | None = None,
) -> dict[str, Any]:
    """``dataset_estimates`` from what the caller has read already: the dataset's
    ``variant`` settings and its ``reviewed`` count (the review screen, on every key),
    after ``metric_writes.ensure``; ``records``, the dataset's record count if known
    (the review screen counts it once: counting 300,000 records on every key took
    20-90 ms)."""
    if target is None:
        target = settings.others(db, dataset)["estimate.target_halfwidth"]
    sums = estimate_reads.judge_sums(db, dataset)
    names = estimated_names(sums, variant)
    drawn = review_draws.latest(db, dataset)
    block: dict[str, Any] = {"target_halfwidth": target, "more_reviews": None, "warnings": []}
    if drawn is None:
        block.update(draw=None, reviewed_outside_draw=reviewed)
        block["metrics"] = {name: _null() for name in names}
        return block
    members = list(drawn.members)
    status = estimate_reads.statuses(db, [m.record for m in members])
    # The reviewed records before the first one not yet reviewed, in draw order: the
    # draw at a lower key threshold, where each π is that of the lower threshold.
    first_open = next(
        (i for i, m in enumerate(members) if status.get(m.record) != "reviewed"), None
    )
    prefix = members if first_open is None else members[:first_open]
    tau = drawn.threshold if first_open is None else members[first_open].key
    out_of_order = sum(1 for m in members[len(prefix) :] if status.get(m.record) == "reviewed")
    in_draw = len(prefix) + out_of_order
    block["draw"] = {
        "id": drawn.id,
        "strategy": drawn.strategy,
        "seed": drawn.seed,
        "n": drawn.n,
        "drawn": len(members),
        "at": drawn.at,
        "reviewed": in_draw,
        "used": len(prefix),
        "reviewed_out_of_order": out_of_order,
    }
    block["reviewed_outside_draw"] = reviewed - in_draw
    if out_of_order:
        block["warnings"].append(
            f"{out_of_order} records of the draw were reviewed out of draw order and are not "
            "used until the ones before them are reviewed"
        )
    if reviewed - in_draw:
        block["warnings"].append(
            f"{reviewed - in_draw} reviewed records are outside the draw and not used"
        )
    population = drawn.population
    now_records = estimate_reads.record_count(db, dataset) if records is None else records
    if now_records != population:
        block["warnings"].append(
            f"the dataset has {now_records} records, the draw was made from {population}: "
            "records added since cannot be covered; draw again"
        )
    values = estimate_reads.metric_values(db, [m.record for m in prefix])
    metrics: dict[str, Any] = {}
    for name, component in names.items():
        used = []
        for m in prefix:
            layers = values.get(m.record, {})
            f = layers.get("judge", {}).get(component)
            y = layers.get("effective", {}).get(component)
            if f is not None and y is not None:
                used.append((f, y, sampling.inclusion(m.weight, tau)))
        n_defined, judge_total = sums[component]
        est = core_estimate.estimate(n_defined, judge_total, used)
        more = None if target is None else core_estimate.more_reviews(est, target)
        if more is not None:  # reviewing every record leaves no sampling error at all
            more = min(more, n_defined - est.n_used)
        metrics[name] = {
            "estimate": _finite(est.estimate),
            "ci": None if est.ci is None else [_finite(est.ci[0]), _finite(est.ci[1])],
            "n_used": est.n_used,
            "lambda": est.lam,
            "halfwidth": _finite(core_estimate.halfwidth(est)),
            "more_reviews": more,
        }
    block["metrics"] = metrics
    # the half-width is on the metrics' own scale: the rule at the top is the rates'
    # (counts and lengths, e.g. longform.supported, have their own per-metric figure)
    wanted = [
        m["more_reviews"]
        for name, m in metrics.items()
        if m["more_reviews"] is not None and name not in counted()
    ]
    block["more_reviews"] = max(wanted) if wanted else None
    return block


# -- one-line descriptions (metrics, agreement text and HTML, the TUI) -----------------


def draw_line(block: dict[str, Any]) -> str:
    """One line on the draw the estimate comes from (or that there is none)."""
    d = block.get("draw")
    if d is None:
        return "no review draw yet: `ragreview queue` draws one; until then there is no estimate"
    line = (
        f"draw {d['id']} ({d['strategy']}, seed {d['seed']}): {d['used']} of {d['drawn']} "
        f"drawn records reviewed in order and used"
    )
    if block.get("reviewed_outside_draw"):
        line += f"; {block['reviewed_outside_draw']} reviewed outside the draw (not used)"
    return line


def stop_line(block: dict[str, Any]) -> str | None:
    target, more = block.get("target_halfwidth"), block.get("more_reviews")
    if target is None:
        return None
    if more is None:
        return f"target ±{target:g}: no estimate yet"
    return f"target ±{target:g}: {more} more reviews" if more else f"target ±{target:g}: reached"


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None
