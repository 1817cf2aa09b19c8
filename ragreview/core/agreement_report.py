"""The ``agreement`` report: judge vs reviewed labels and metrics over reviewed records.

Assembles the statistics of ``agreement`` over items chosen by ``label_items``. The
reviewed value of a label is the *effective* one (human override, else the judge's):
a reviewed record's un-overridden labels count as the reviewer accepting the judge.
"Independent" agreement instead compares the judge with the blind first pass alone
(what the reviewer said before seeing the judge), which is free of anchoring.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import label_items
from .agreement import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    binary_stats_of_counts,
    bootstrap_cis,
    cohen_kappa,
    import_bootstrap,
    krippendorff_alpha_nominal,
    metric_diffs,
    metrics_described,
    metrics_stats,
    multiclass_stats_of_counts,
    percent_agreement,
    with_intervals,
)
from .families import task_family
from .labels import CATALOGUE, LabelSpec, Layer, effective
from .record import Record
from .record_targets import LeanTargets

MIN_LABEL_ITEMS = 30  # below this a κ or a rate moves a lot with one item
MIN_METRIC_RECORDS = 20


@dataclass(frozen=True)
class Reviewed:
    """One reviewed record with its label layers (``blind`` None: no blind pass).
    ``record``: the record, or only its label targets (``record_targets.LeanTargets``, all
    the label counts read)."""

    record: Record | LeanTargets
    judge: Layer
    human: Layer
    blind: Layer | None = None

    @property
    def effective(self) -> Layer:
        """The reviewed labels: human overrides on the judge's (the judge layer itself,
        not a copy, where the record has none)."""
        return effective(self.judge, self.human) if self.human else self.judge


@dataclass
class LabelTally:
    """What the label statistics need from the records, counted as they stream past:
    per label, how often each ``(judge, human)`` value pair occurred (in first-seen
    order), and the items the human side gives but the judge does not. A few counters,
    whatever the number of records, instead of every item."""

    human_names_only: bool = False
    pairs: dict[str, dict[tuple[Any, Any], int]] = field(default_factory=dict)
    unpaired: dict[str, int] = field(default_factory=dict)
    # the catalogue's labels of each set of families, in catalogue order (most records
    # of a dataset share one set: the catalogue is walked once per set, not per record)
    _of_families: dict[frozenset[str | None], list[tuple[str, LabelSpec]]] = field(
        default_factory=dict, repr=False
    )
    _family_of: dict[str, str] = field(default_factory=dict, repr=False)

    def add(self, record: Record | LeanTargets, judge: Layer, human: Layer) -> None:
        keys = label_items.RecordKeys(record)  # each target kind read once per record
        if self.human_names_only:
            labels = [(name, label) for name, label in CATALOGUE.items() if name in human]
        else:
            labels = self._compared(record, judge, human)
        pairs, none = self.pairs, label_items.NONE
        for name, label in labels:
            counts = pairs.get(name)
            if counts is None:
                counts = pairs[name] = {}
            judged, given = judge.get(name, none), human.get(name, none)
            missing = label_items.count_label(label, keys, judged, given, counts)
            if missing:
                self.unpaired[name] = self.unpaired.get(name, 0) + missing

    def _compared(
        self, record: Record | LeanTargets, judge: Layer, human: Layer
    ) -> list[tuple[str, LabelSpec]]:
        """``label_items.applies`` for every name at once: the labels of the record's
        family and of those of the labels either layer carries, in catalogue order."""
        family_of = self._family_of
        if len(family_of) != len(CATALOGUE):  # (first, or after a family registered)
            family_of.update((name, label.family) for name, label in CATALOGUE.items())
            self._of_families.clear()
        own = task_family(record.task)
        # (a name outside the catalogue adds None, the family no label has)
        families = frozenset(
            (own.name if own else None, *map(family_of.get, judge), *map(family_of.get, human))
        )
        labels = self._of_families.get(families)
        if labels is None:
            labels = self._of_families[families] = [
                (name, label) for name, label in CATALOGUE.items() if label.family in families
            ]
        return labels

    def stats(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, int]]:
        """``label_agreement``'s result from the counts."""
        labels: dict[str, Any] = {}
        multiclass: dict[str, Any] = {}
        for name in label_items.label_names([self.pairs]):
            got = self.pairs[name]
            if not got:
                continue
            binary: Counter[tuple[bool, bool]] = Counter()
            for (j, h), k in got.items():
                binary[(label_items.binary(name, j), label_items.binary(name, h))] += k
            labels[name] = binary_stats_of_counts(binary)
            if label_items.is_multiclass(name):
                multiclass[name] = multiclass_stats_of_counts(got)
        return labels, multiclass, dict(self.unpaired)


def label_agreement(
    pairs_by_record: Iterable[tuple[Record, Layer, Layer]],
    *,
    human_names_only: bool = False,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, int]]:
    """Per label name: the binary block, the multi-class block, and unpaired counts.

    Each element is ``(record, judge layer, human-side layer)``. The third result
    counts items the human side gives but the judge does not (they cannot be scored).
    ``human_names_only`` (blind passes): a label is compared only on records where the
    human side gave it at all, since a blind pass may cover some label kinds only.
    """
    tally = LabelTally(human_names_only)
    for record, judge, human in pairs_by_record:
        tally.add(record, judge, human)
    return tally.stats()


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def metric_agreement(
    per_record: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> dict[str, Any]:
    """Per metric name, from each record's ``(judge metrics, reviewed metrics)``.

    A record counts for a metric when the metric is defined under both layers.
    """
    return metrics_stats(metric_pairs(per_record), seed, resamples)


def metric_pairs(
    per_record: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
) -> dict[str, list[tuple[float, float]]]:
    """Per metric, the ``(judge, reviewed)`` values of records where both are defined."""
    pairs: dict[str, list[tuple[float, float]]] = {}
    for judge, reviewed in per_record:
        for name, value in judge.items():  # a name the judge lacks has no pair
            j, r = _number(value), _number(reviewed.get(name))
            if j is not None and r is not None:
                pairs.setdefault(name, []).append((j, r))
    return dict(sorted(pairs.items()))


class Background:
    """``fn(*args)`` on a thread of its own; ``result()`` waits for it and returns what
    it returned (or raises what it raised)."""

    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        self._out: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn, args), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            self._out = fn(*args)
        except BaseException as error:  # (handed to the caller by result())
            self._error = error

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._out


def _given(
    pairs: Mapping[str, Sequence[tuple[float, float]]] | Background,
) -> Mapping[str, Sequence[tuple[float, float]]]:
    """The metrics' pairs, waiting for them where a ``Background`` reads them."""
    return pairs.result() if isinstance(pairs, Background) else pairs


def _metrics_apart(
    pairs: Mapping[str, Sequence[tuple[float, float]]] | Background,
    seed: int,
    resamples: int,
    claim: threading.Lock,
) -> tuple[list[tuple[float, float] | None], dict[str, dict[str, Any]] | None]:
    """The metrics' bootstrap intervals, and the rest of their blocks
    (``metrics_described``) if this thread is the first to ``claim`` them, else None."""
    if isinstance(pairs, Background):
        # numpy (the bootstrap's) is imported while SQLite reads the pairs on their own
        # thread, which lets go of the interpreter, rather than after them: the import
        # was a third of this thread's time
        import_bootstrap()
    values = _given(pairs)
    cis = bootstrap_cis(metric_diffs(values), seed, resamples)
    return cis, metrics_described(values) if claim.acquire(blocking=False) else None


def build(
    reviewed: Iterable[Reviewed],
    pairs_by_metric: Mapping[str, Sequence[tuple[float, float]]] | Background | None = None,
    *,
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
    meanwhile: Callable[[], object] | None = None,
) -> dict[str, Any]:
    """The full report (docs/agreement.md: ``labels`` and ``metrics`` plus extra sections).

    ``pairs_by_metric`` holds, per metric, the ``(judge, reviewed)`` values of the
    reviewed records where both are defined (``metric_pairs``): the stored per-record
    rows (``store.review_queries``), so that there is one way to compute a record's
    metrics; or a ``Background`` that reads them (beside the label count). None leaves
    the ``metrics`` section empty, with a warning.

    ``reviewed`` is read once, record by record (it may be a stream): only counts are
    kept, so memory does not grow with the number of records. ``meanwhile``: the
    caller's own work, done once the labels are counted, while the metrics' thread
    may still be drawing its bootstrap.
    """
    warnings: list[str] = []
    # The metrics' bootstrap runs mostly inside numpy, which lets go of the interpreter:
    # it runs beside the label count below, on a second core where there is one.
    # The rest of the metrics' blocks is computed by whichever thread is free first: this
    # one once the labels are counted, or the metrics' once the intervals are drawn.
    claim = threading.Lock()
    apart = (
        None
        if pairs_by_metric is None
        else Background(_metrics_apart, pairs_by_metric, seed, resamples, claim)
    )
    tally, blind_tally = LabelTally(), LabelTally(human_names_only=True)
    records = blind_records = 0
    for r in reviewed:
        records += 1
        tally.add(r.record, r.judge, r.effective)
        if r.blind:
            blind_records += 1
            blind_tally.add(r.record, r.judge, r.blind)
    labels, multiclass, unpaired = tally.stats()
    for name, count in unpaired.items():
        warnings.append(f"{name}: {count} items have a human label but no judge label")
    few = [f"{name} {block['n']}" for name, block in labels.items() if block["n"] < MIN_LABEL_ITEMS]
    if few:
        warnings.append(
            f"few items compared (under {MIN_LABEL_ITEMS}): {', '.join(few)}; "
            "those labels' numbers are very uncertain"
        )

    if meanwhile is not None:
        meanwhile()
    if pairs_by_metric is None or apart is None:
        metrics: dict[str, Any] = {}
        warnings.append("no per-record metrics were given: the metrics section is empty")
    else:
        if claim.acquire(blocking=False):  # the intervals are still drawn: meanwhile
            described = metrics_described(_given(pairs_by_metric))
            cis, _ = apart.result()
        else:
            cis, described = apart.result()
        metrics = with_intervals(described, cis)
        few = [f"{n} {b['n']}" for n, b in metrics.items() if b["n"] < MIN_METRIC_RECORDS]
        if few:
            warnings.append(
                f"few records (under {MIN_METRIC_RECORDS}): {', '.join(few)}; "
                "those metrics' bias intervals are not reliable"
            )

    ind_labels, ind_multi, _ = blind_tally.stats()
    if not records:
        warnings.insert(0, "no record is marked reviewed: nothing to compare")
    return {
        "labels": labels,
        "metrics": metrics,
        "records": records,
        "multiclass": multiclass,
        "independent": {"records": blind_records, "labels": ind_labels, "multiclass": ind_multi},
        "bootstrap": {"seed": seed, "resamples": resamples, "level": 0.95},
        "warnings": warnings,
    }


def reviewer_agreement(
    per_record: Iterable[tuple[Record, Layer, Sequence[Layer | None]]],
    reviewers: Sequence[str],
) -> dict[str, Any]:
    """Human-vs-human agreement: per label, Krippendorff's α (nominal) over all
    reviewers, pairwise percent agreement, and Cohen's κ when there are two.

    Each element is ``(record, judge layer, [each reviewer's effective layer or None
    when they did not review the record])``. Items follow ``label_items``; a unit
    counts when at least two reviewers gave it a value.
    """
    units: dict[str, list[list[Any]]] = {}
    records = 0
    for record, _judge, layers in per_record:
        present = [layer for layer in layers if layer is not None]
        if len(present) < 2:
            continue
        records += 1
        for name in CATALOGUE:
            if not label_items.applies(record, name, present):
                continue
            given = [
                {} if layer is None else label_items.values(record, layer, name) for layer in layers
            ]
            items: dict[label_items.Item, None] = {}
            for values in given:
                items.update(dict.fromkeys(values))
            for item in items:
                units.setdefault(name, []).append(
                    [label_items.hashable(values[item]) if item in values else None
                     for values in given]
                )  # fmt: skip
    labels: dict[str, Any] = {}
    for name in label_items.label_names([units]):
        pairable = [u for u in units[name] if sum(v is not None for v in u) >= 2]
        block: dict[str, Any] = {
            "items": len(pairable),
            "percent_agreement": percent_agreement(pairable),
            "alpha": krippendorff_alpha_nominal(pairable),
        }
        if len(reviewers) == 2:
            block["kappa"] = cohen_kappa([(u[0], u[1]) for u in pairable])
        labels[name] = block
    return {"reviewers": list(reviewers), "records": records, "labels": labels}
