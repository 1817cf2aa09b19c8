"""Agreement among the annotators of declared human metrics, and how automatic
metrics follow them (the ``annotators`` block of ``ragreview agreement``).

For every human metric a record's ``rubric`` declares (InspectorRAGet experiments,
docs/formats.md), over the records, each annotator's value:

- Krippendorff's α at the nominal level (on the values) and at the ordinal level (on
  the declared ``numeric_value`` order; numerical metrics on their numbers), as
  ``krippendorff.alpha`` computes them (Krippendorff 2011, coincidence matrices);
- Cohen's weighted κ (quadratic weights over the ordered categories, as
  ``sklearn.metrics.cohen_kappa_score(weights="quadratic")``) when exactly two
  annotators labelled the metric;
- per automatic metric (``stored.<name>`` scores), Spearman's ρ and Kendall's τ-b
  (as ``scipy.stats.spearmanr`` / ``kendalltau``) against the annotators' aggregate,
  computed with the metric's own aggregator as InspectorRAGet does (``average``: mean;
  ``median``: the lower median; ``majority``: its majority rule, records it calls
  "Indeterminate" left out).

Every function is pure and returns None where the statistic is undefined.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .agreement import coincidences, krippendorff_alpha_nominal, spearman

Units = Sequence[Sequence[Any]]  # per item, each annotator's value (None: not given)


def krippendorff_alpha_ordinal(units: Units) -> float | None:
    """Krippendorff's α at the ordinal level over numeric ranks.

    δ²(c, k) = (Σ_{g from c to k} n_g − (n_c + n_k)/2)², with n_g the marginal of value
    g; α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck. None without expected
    disagreement."""
    pairs = coincidences(units)
    totals: dict[Any, float] = {}
    for (a, _), weight in pairs.items():
        totals[a] = totals.get(a, 0.0) + weight
    domain = sorted(totals)
    n = sum(totals.values())
    cumulative = [0.0]
    for value in domain:
        cumulative.append(cumulative[-1] + totals[value])
    index = {value: i for i, value in enumerate(domain)}

    def delta2(a: Any, b: Any) -> float:
        i, j = sorted((index[a], index[b]))
        return (cumulative[j + 1] - cumulative[i] - (totals[a] + totals[b]) / 2) ** 2

    observed = math.fsum(w * delta2(a, b) for (a, b), w in pairs.items() if a != b)
    expected = math.fsum(
        totals[a] * totals[b] * delta2(a, b) for a in domain for b in domain if a != b
    )
    if n <= 1 or expected <= 1e-12:
        return None
    return 1 - (n - 1) * observed / expected


def weighted_kappa(pairs: Sequence[tuple[float, float]], order: Sequence[float]) -> float | None:
    """Cohen's κ with quadratic weights over the categories ``order`` (ascending):
    1 − Σ w O / Σ w E, w_ij = (i − j)²; E from the two raters' marginals."""
    n = len(pairs)
    if n == 0:
        return None
    position = {value: i for i, value in enumerate(order)}
    k = len(order)
    observed = [[0.0] * k for _ in range(k)]
    for a, b in pairs:
        observed[position[a]][position[b]] += 1
    rows = [sum(r) for r in observed]
    cols = [sum(observed[i][j] for i in range(k)) for j in range(k)]
    num = math.fsum((i - j) ** 2 * observed[i][j] for i in range(k) for j in range(k))
    den = math.fsum((i - j) ** 2 * rows[i] * cols[j] / n for i in range(k) for j in range(k))
    return None if den == 0 else 1 - num / den


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b (as ``scipy.stats.kendalltau``): (C − D) / √((n0 − n1)(n0 − n2))
    with n1, n2 the pairs tied in x, in y. Quadratic in the number of records."""
    n = len(x)
    concordant = discordant = tied_x = tied_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0:
                tied_x += 1
            if dy == 0:
                tied_y += 1
            if dx and dy:
                if (dx > 0) == (dy > 0):
                    concordant += 1
                else:
                    discordant += 1
    pairs = n * (n - 1) // 2
    den = (pairs - tied_x) * (pairs - tied_y)
    return None if den <= 0 else (concordant - discordant) / math.sqrt(den)


# -- InspectorRAGet's aggregators (src/utilities/aggregators.ts) -----------------------

_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]{0,9}")


def _js_key_order(keys: list[str]) -> list[str]:
    """The order of a JavaScript object's keys: array-index-like ones ascending, then
    the others as inserted (``countBy``'s counter is such an object)."""
    index = [k for k in keys if _ARRAY_INDEX.fullmatch(k) and int(k) < 2**32 - 1]
    return sorted(index, key=int) + [k for k in keys if k not in index]


def _number(value: Any, numeric: Mapping[Any, float]) -> float:
    return float(numeric[value]) if value in numeric else float(value)


def majority(values: Sequence[Any], numeric: Mapping[Any, float]) -> Any:
    """InspectorRAGet's ``majorityAggregator``: the most common value, or None where it
    says "Indeterminate" (every annotator differs; too many distinct values; a split
    whose top two values lie more than one step apart)."""
    counts: dict[str, int] = {}
    by_key: dict[str, Any] = {}
    for v in values:
        counts[str(v)] = counts.get(str(v), 0) + 1
        by_key.setdefault(str(v), v)
    ranked = sorted(_js_key_order(list(counts)), key=lambda k: -counts[k])  # stable
    n, unique = len(values), len(ranked)
    top, top_count = by_key[ranked[0]], counts[ranked[0]]
    half = math.ceil(n / 2)

    def gap() -> float:
        second = by_key[ranked[1]]
        return abs(_number(top, numeric) - _number(second, numeric))

    if top_count == n:
        return top
    if unique == n and unique > 1:
        return None
    if unique > half or (top_count < half and unique == half and gap() > 1):
        return None
    return top


def aggregate(values: Sequence[Any], aggregator: str, numeric: Mapping[Any, float]) -> float | None:
    """The annotators' aggregate of one item as a number (``numeric`` maps a
    categorical value to its ``numeric_value``; numbers map to themselves)."""
    if not values:
        return None
    numbers = [_number(v, numeric) for v in values]
    if aggregator == "majority":
        top = majority(values, numeric)
        return None if top is None else _number(top, numeric)
    if aggregator == "median":  # the lower middle value for an even count, as InspectorRAGet
        ordered = sorted(numbers)
        return ordered[(len(ordered) - 1) // 2]
    return math.fsum(numbers) / len(numbers)


def numeric_values(entry: Mapping[str, Any]) -> dict[Any, float]:
    """A categorical metric's declared ``numeric_value`` per value (its rubric entry)."""
    numeric: dict[Any, float] = {}
    if entry.get("kind") == "choice":
        for value, number in zip(entry.get("choices") or [], entry.get("numeric") or []):
            if number is not None:
                numeric[value] = float(number)
    return numeric


# -- the report ------------------------------------------------------------------------

Item = tuple[Mapping[str, Any], Mapping[str, float | None]]  # (annotator -> value, scores)


def metric_report(entry: Mapping[str, Any], items: Sequence[Item]) -> dict[str, Any]:
    """One human metric's block: α, weighted κ, correlations with automatic metrics.

    ``entry`` is the metric's rubric declaration; ``items`` per record the annotators'
    values of this metric and the record's scores."""
    numeric = numeric_values(entry)
    annotators = list(dict.fromkeys(who for given, _ in items for who in given))

    units = [[given.get(who) for who in annotators] for given, _ in items]
    ordinal = [[None if v is None else _number(v, numeric) for v in unit] for unit in units]
    block: dict[str, Any] = {
        "kind": entry.get("kind"),
        "aggregator": entry.get("aggregator") or "average",
        "annotators": len(annotators),
        "records": sum(1 for given, _ in items if given),
        "paired_records": sum(1 for unit in units if sum(v is not None for v in unit) >= 2),
        "alpha_nominal": krippendorff_alpha_nominal(units),
        "alpha_ordinal": krippendorff_alpha_ordinal(ordinal),
        "weighted_kappa": None,
    }
    if len(annotators) == 2:
        pairs = [(a, b) for a, b in ordinal if a is not None and b is not None]
        order = sorted(set(numeric.values()) | {v for p in pairs for v in p})
        block["weighted_kappa"] = weighted_kappa(pairs, order)
    aggregates = [
        aggregate(list(given.values()), block["aggregator"], numeric) for given, _ in items
    ]
    names = list(dict.fromkeys(n for _, scores in items for n in scores))
    correlations = {}
    for name in names:
        xs, ys = [], []
        for (_, scores), agg in zip(items, aggregates):
            score = scores.get(name)
            if agg is not None and score is not None and not math.isnan(score):
                xs.append(float(score))
                ys.append(agg)
        correlations[name] = {
            "n": len(xs),
            "spearman": spearman(xs, ys),
            "kendall": kendall_tau_b(xs, ys),
        }
    block["correlations"] = correlations
    return block


def report(
    per_record: Sequence[
        tuple[Mapping[str, Any], Mapping[str, Mapping[str, Any]], Mapping[str, Any]]
    ],
) -> dict[str, Any]:
    """Per declared human metric, its block (``metric_report``). ``per_record`` holds
    each record's (rubric, {annotator: {metric: value}}, scores)."""
    declared: dict[str, Mapping[str, Any]] = {}
    for rubric, _, _ in per_record:
        for name, entry in rubric.items():
            declared.setdefault(name, entry)
    out = {}
    for name, entry in declared.items():
        items: list[Item] = []
        for _, layers, scores in per_record:
            given = {who: layer[name] for who, layer in layers.items() if name in layer}
            automatic = {
                n[len("stored.") :]: v for n, v in scores.items() if n.startswith("stored.")
            }
            items.append((given, automatic))
        out[name] = metric_report(entry, items)
    return out


# -- the reviewer against the file's annotators ------------------------------------------

Reviewed = tuple[Mapping[str, Any], Mapping[str, Mapping[str, Any]], Mapping[str, Any]]


def _compare(pairs: Sequence[tuple[float, float]], declared: Sequence[float]) -> dict[str, Any]:
    """Two raters over the same records: quadratic weighted κ over the ordered values
    (the declared ones and any other given), and Krippendorff's ordinal α."""
    order = sorted(set(declared) | {v for p in pairs for v in p})
    return {
        "n": len(pairs),
        "weighted_kappa": weighted_kappa(pairs, order) if pairs else None,
        "alpha_ordinal": krippendorff_alpha_ordinal([list(p) for p in pairs]) if pairs else None,
    }


def reviewer_report(per_record: Sequence[Reviewed]) -> dict[str, Any]:
    """Per declared human metric, the reviewer's own values against each annotator's
    and against the annotators' aggregate (the metric's aggregator), over the records
    where both gave one. ``per_record``: (rubric, {annotator: {metric: value}},
    {metric: the reviewer's value}). Metrics the reviewer gave no value of are left out."""
    declared: dict[str, Mapping[str, Any]] = {}
    for rubric, _, _ in per_record:
        for name, entry in rubric.items():
            declared.setdefault(name, entry)
    out: dict[str, Any] = {}
    for name, entry in declared.items():
        numeric = numeric_values(entry)
        levels = sorted(numeric.values())
        mine = [
            (_number(own[name], numeric), layers)
            for _, layers, own in per_record
            if own.get(name) is not None
        ]
        if not mine:
            continue
        annotators = list(dict.fromkeys(who for _, layers in mine for who in layers))
        against = {}
        for who in annotators:
            pairs = [
                (value, _number(layers[who][name], numeric))
                for value, layers in mine
                if name in layers.get(who, {})
            ]
            if pairs:
                against[who] = _compare(pairs, levels)
        aggregator = str(entry.get("aggregator") or "average")
        pairs = []
        for value, layers in mine:
            theirs = aggregate(
                [layer[name] for layer in layers.values() if name in layer], aggregator, numeric
            )
            if theirs is not None:
                pairs.append((value, theirs))
        out[name] = {
            "aggregator": aggregator,
            "records": len(mine),
            "annotators": against,
            "aggregate": _compare(pairs, levels),
        }
    return out
