"""Which items a label comparison counts, and each label's binary view.

An *item* is one value a rater gives: a label name on one target of one record
(``relevant`` on ``0a``). Rules, the same for judge vs human and human vs human:

- A label name is compared on a record only when its family applies there: the
  record's task is of that family (``Family.owns_task``: ``trace``; ``rgb-*``;
  ``mtrag``; ``longform``; ``ragas``; ``deepeval``; ``ragchecker``) or one of the
  compared layers carries a label of that family on the record. A trace record's
  ``rejected`` is not "false", it does not apply; but a trace record where the judge
  marked no sentence relevant counts as "all irrelevant".
- Then every target the record has for that label kind is an item. An absent value
  takes the catalogue default where one is defined (``relevant``/``utilized`` absent =
  false); with no default, an item missing from either layer is not compared.
- ``support_keys`` (a list per response sentence) is compared as one boolean item per
  (response sentence, candidate) — is this document sentence or special token cited?

Binary views (positive class) for the confusion matrix of non-boolean labels, each
declared with the label (``LabelSpec.positive``, in its family's module):
``fact`` = ``"S"``; ``idk``/``underspecified`` = 1 (0.5 and 0 negative);
``answerability`` = ``"ANSWERABLE"``; ``rb_llm_rating`` = rating > 5; DeepEval's
verdicts = ``"yes"``; RAGChecker's four labels = ``"Entailment"``;
``support_keys`` items are booleans already. Multi-class agreement (accuracy, κ,
matrix) is reported separately for the choice and rating labels.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any

from .families import task_family
from .labels import CATALOGUE, SUPPORT_TOKENS, LabelSpec, Layer
from .record import Record
from .record_targets import LeanTargets

Item = tuple[str, ...]  # (target,) or (response key, cited key) for support_keys

MULTICLASS_KINDS = ("choice", "rating")
RATING_THRESHOLD = 5


def binary(name: str, value: Any) -> bool:
    """The label value in its binary view (see the module docstring)."""
    label = CATALOGUE[name]
    if label.kind in ("bool", "keys"):
        return bool(value)
    if label.kind == "rating":
        return float(value) > RATING_THRESHOLD
    return value == label.positive


def is_multiclass(name: str) -> bool:
    return CATALOGUE[name].kind in MULTICLASS_KINDS


def hashable(value: Any) -> Hashable:
    return tuple(value) if isinstance(value, list) else value


def applies(record: Record, name: str, layers: Iterable[Layer]) -> bool:
    """Whether label ``name`` is compared on ``record`` (see the module docstring)."""
    family = CATALOGUE[name].family
    own = task_family(record.task)
    if own is not None and own.name == family:
        return True
    return any(n in CATALOGUE and CATALOGUE[n].family == family for layer in layers for n in layer)


def values(record: Record, layer: Layer, name: str) -> dict[Item, Any]:
    """Every item of label ``name`` on ``record`` that ``layer`` gives a value to."""
    label = CATALOGUE[name]
    given: Mapping[str, Any] = layer.get(name, {})
    out: dict[Item, Any] = {}
    if label.kind == "keys":
        candidates = [k for k, _ in record.doc_sentences] + sorted(SUPPORT_TOKENS)
        for target in record.targets(label.target):
            if target in given:
                cited = set(given[target])
                for key in candidates:
                    out[(target, key)] = key in cited
        return out
    for target in record.targets(label.target):
        value = given.get(target, label.default)
        if value is not None:
            out[(target,)] = value
    return out


def paired(
    record: Record, judge: Layer, human: Layer, name: str, *, strict: bool = False
) -> list[tuple[Any, Any]]:
    """``(judge, human)`` values of every item both layers give on this record.

    ``strict`` (blind passes, which may cover some label kinds only): the label is
    compared only where the human side gave that very label.
    """
    if not (name in human if strict else applies(record, name, (judge, human))):
        return []
    left = values(record, judge, name)
    right = values(record, human, name)
    return [(left[item], right[item]) for item in left if item in right]


class RecordKeys:
    """A record's targets per kind, each read once: the labels of a record share them.

    ``record`` is a ``Record`` or anything with its ``task`` and ``targets(kind)``
    (``core.record_targets``: read from the stored JSON or the stored targets)."""

    __slots__ = ("record", "_unique", "_members", "_candidates")

    def __init__(self, record: Record | LeanTargets) -> None:
        self.record = record
        self._unique: dict[str, dict[str, None]] = {}
        self._members: dict[str, set[str]] = {}
        self._candidates: set[str] | None = None

    def unique(self, kind: str) -> dict[str, None]:
        """The record's targets of ``kind``, each once, in the record's order."""
        got = self._unique.get(kind)
        if got is None:
            got = self._unique[kind] = dict.fromkeys(self.record.targets(kind))
        return got

    def members(self, kind: str) -> set[str] | dict[str, None]:
        """The record's targets of ``kind``, for ``in`` and ``len`` only (no order: a
        set, where the ordered ``unique`` is not read already)."""
        got: set[str] | dict[str, None] | None = self._unique.get(kind)
        if got is None:
            got = self._members.get(kind)
            if got is None:
                got = self._members[kind] = set(self.record.targets(kind))
        return got

    def candidates(self) -> set[str]:
        """What a ``support_keys`` item may cite: a document sentence or a special token."""
        if self._candidates is None:
            self._candidates = got = set(SUPPORT_TOKENS)
            got.update(self.members("doc"))
        return self._candidates


NONE: Mapping[str, Any] = {}  # (a layer without the label; never written)


def count_pairs(
    record: Record | LeanTargets,
    judge: Layer,
    human: Layer,
    name: str,
    counts: dict[tuple[Any, Any], int],
    keys: RecordKeys | None = None,
) -> int:
    """Add the pairs of ``paired`` to ``counts`` (``{(judge, human): how many}``, first
    seen first); return how many items ``human`` gives that ``judge`` does not.

    The same numbers as building every item with ``values``, without building them
    where that is most of the work: a record's hundreds of sentence and citation
    items are mostly unlabelled on both sides, so ``support_keys`` is counted with set
    sizes, and a label with a default counts its unlabelled targets in one step.
    ``keys``: the record's ``RecordKeys``, if the caller has it (one per record).
    """
    label, judged, given = CATALOGUE[name], judge.get(name, NONE), human.get(name, NONE)
    return count_label(label, keys or RecordKeys(record), judged, given, counts)


def count_label(
    label: LabelSpec,
    keys: RecordKeys,
    judged: Mapping[str, Any],
    given: Mapping[str, Any],
    counts: dict[tuple[Any, Any], int],
) -> int:
    """``count_pairs`` of one label given its spec and the two layers' values of it
    (``judged`` and ``given``: ``{target: value}``, the same object where the record
    has no override)."""
    missing = 0
    kind = label.kind
    if kind == "keys":
        if not given:  # no item of either kind below
            return 0
        candidates = keys.candidates()
        for target in keys.unique(label.target):
            if target not in given:
                continue
            if target not in judged:
                missing += len(candidates)
                continue
            cited, told = judged[target], given[target]
            by_judge = candidates.intersection(cited)
            if told is cited or told == cited:  # (the reviewer kept the judge's list,
                # as on most reviewed records: its items agree, cited or not)
                shared, rest = len(by_judge), len(candidates) - len(by_judge)
                if shared:
                    counts[True, True] = counts.get((True, True), 0) + shared
                if rest:
                    counts[False, False] = counts.get((False, False), 0) + rest
                continue
            by_human = candidates.intersection(told)
            shared = len(by_judge & by_human)
            cells = (
                ((True, True), shared),
                ((True, False), len(by_judge) - shared),
                ((False, True), len(by_human) - shared),
                ((False, False), len(candidates) - len(by_judge | by_human)),
            )
            for pair, k in cells:
                if k:
                    counts[pair] = counts.get(pair, 0) + k
        return missing
    default = label.default
    multiclass = kind in MULTICLASS_KINDS
    if default is None and not multiclass:
        if not given:  # an item needs a value on both sides
            return 0
        # items the human side gives, in its order: a two-valued label's counts do not
        # depend on the order its pairs came in (only a matrix's rows and columns do)
        members = keys.members(label.target)
        for target, h in given.items():
            if h is None or target not in members:
                continue
            j = judged.get(target)
            if j is None:
                missing += 1
                continue
            try:
                counts[(j, h)] = counts.get((j, h), 0) + 1
            except TypeError:  # a list value (malformed layer): count it as a tuple
                _count(counts, j, h)
        return missing
    if multiclass:  # every item, in the record's order (a matrix's order)
        if default is None and not given:
            return 0
        for target in keys.unique(label.target):
            j, h = judged.get(target, default), given.get(target, default)
            if j is None:
                missing += h is not None
            elif h is not None:
                _count(counts, j, h)
        return missing
    members = keys.members(label.target)
    if given is judged:  # the effective layer of a record without overrides is its judge's:
        named = 0  # each item is (j, j), in the judge's order
        for target, j in judged.items():
            if target in members:
                named += 1
                if j is not None:
                    counts[(j, j)] = counts.get((j, j), 0) + 1
    else:
        both = [t for t in judged if t in members]
        both += [t for t in given if t in members and t not in judged]
        named = len(both)
        for target in both:
            j, h = judged.get(target, default), given.get(target, default)
            if j is None:
                missing += h is not None
            elif h is not None:
                counts[(j, h)] = counts.get((j, h), 0) + 1
    if len(members) > named:  # the rest take the default on both sides
        pair = (default, default)
        counts[pair] = counts.get(pair, 0) + len(members) - named
    return missing


def _count(counts: dict[tuple[Any, Any], int], j: Any, h: Any) -> None:
    """Count one ``(judge, human)`` pair."""
    try:
        counts[(j, h)] = counts.get((j, h), 0) + 1
    except TypeError:  # a list value (malformed layer): count it as a tuple
        pair = (hashable(j), hashable(h))
        counts[pair] = counts.get(pair, 0) + 1


def label_names(layers: Iterable[Iterable[str]]) -> list[str]:
    """Catalogue names present in any of the layers (or name lists), in catalogue order."""
    seen: set[str] = set()
    for layer in layers:
        seen.update(layer)
    return [name for name in CATALOGUE if name in seen]
