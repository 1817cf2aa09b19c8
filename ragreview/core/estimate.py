"""The corrected headline number: a dataset mean as the reviewers would label every record.

Prediction-powered inference (Angelopoulos et al., *Science* 2023) with PPI++ power
tuning (Angelopoulos, Duchi & Zrnic 2023), inverse-probability weighted for a queue
drawn with unequal inclusion probabilities (Zrnic & Candès, "Active statistical
inference", ICML 2024). The records are the whole population, so the interval is the
design-based one of the Poisson draw that chose which records humans see
(docs/estimate.md):

    θ̂(λ) = ( λ·Σ_{all N} f_i  +  Σ_{used} (y_i − λ f_i) / π_i ) / N
    V̂(λ) = Σ_{used} (1 − π_i) (y_i − λ f_i)² / π_i²  /  N²

with f the judge's value, y the reviewed value and π the record's inclusion probability.
θ̂ is unbiased for every fixed λ; λ is the one that minimises V̂ (weighted least squares
of y on f through the origin), clipped to [0, 1]: 0 is the reviewers alone
(Horvitz–Thompson), 1 is plain PPI. The 95 % interval is θ̂ ± 1.96·√V̂ (normal, as in
the papers).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054  # the standard normal's 97.5 % quantile
MIN_USED = 2  # below this there is no variance to speak of: the estimate is null
# The stopping rule never says "stop" below this many used records: a variance estimated
# from a handful (often 0: the reviewers agreed with the judge on all of them) is no
# ground for the normal interval.
MIN_STOP = 30

# Dataset rates that are plain means of a per-record component (docs/metrics.md); the
# other dataset-only values (RMSE, AUROC, RGB's reference correction rate) are ratios.
MEAN_RATES = {
    "rgb.accuracy": "rgb._accuracy",
    "rgb.rejection_rate": "rgb._rejection",
    "rgb.reject_evalue.rejection_rate": "rgb._reject_evalue",
    "rgb.reject_evalue.accuracy": "rgb._reject_evalue_correct",
    "rgb.fact_evalue.error_detection_rate": "rgb._fact_identified",
    "rgb.fact_evalue.accuracy": "rgb._fact_correct",
    "rgb.error_detection_rate": "rgb._detected",
}
SIMPLE_RATES = {"rgb.error_correction_rate": "rgb._corrected"}  # a mean under rgb.variant=simple


@dataclass(frozen=True)
class Estimate:
    """A corrected estimate of one metric, with its interval and what it used."""

    estimate: float | None
    ci: tuple[float, float] | None
    n_used: int
    lam: float | None  # the power-tuning weight given to the judge
    variance: float | None  # V̂ of the estimate


def estimate(
    population: int, judge_total: float, used: Sequence[tuple[float, float, float]]
) -> Estimate:
    """θ̂ and its 95 % interval from the ``population`` records' judge values (their sum
    ``judge_total``) and the ``used`` reviewed records as ``(judge, reviewed, π)``."""
    k = len(used)
    if population <= 0 or k < MIN_USED:
        return Estimate(None, None, k, None, None)
    if any(not 0 < p <= 1 for _, _, p in used):
        raise ValueError("every inclusion probability must be in (0, 1]")
    weights = [(1 - p) / (p * p) for _, _, p in used]
    fy = sum(w * f * y for w, (f, y, _) in zip(weights, used))
    ff = sum(w * f * f for w, (f, _, _) in zip(weights, used))
    lam = min(1.0, max(0.0, fy / ff)) if ff > 0 else 1.0
    correction = sum((y - lam * f) / p for f, y, p in used)
    theta = (lam * judge_total + correction) / population
    variance = sum(w * (y - lam * f) ** 2 for w, (f, y, _) in zip(weights, used)) / (
        population * population
    )
    half = Z95 * math.sqrt(variance)
    return Estimate(theta, (theta - half, theta + half), k, lam, variance)


def halfwidth(est: Estimate) -> float | None:
    return None if est.variance is None else Z95 * math.sqrt(est.variance)


def more_reviews(est: Estimate, target: float) -> int | None:
    """How many more reviewed records bring the half-width down to ``target``, assuming
    the next ones come from the same kind of draw and the variance shrinks as 1/n (no
    finite-population gain: it errs on the side of more), and never fewer than
    ``MIN_STOP`` used records in all."""
    if est.variance is None or target <= 0:
        return None
    needed = math.ceil(est.n_used * est.variance * Z95 * Z95 / (target * target) - 1e-9)
    needed = max(needed, MIN_STOP)
    return max(0, needed - est.n_used)
