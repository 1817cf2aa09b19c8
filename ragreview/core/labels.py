"""The label catalogue (docs/architecture.md), label validation and the judge/human merge.

A label layer is ``{name: {target: value}}``. The judge layer is never modified by a
review; the human layer holds overrides. ``effective`` is the one place where the two
are combined.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import RecordError
from .record import Record, resolve_target

Value = Any  # a JSON value
Layer = Mapping[str, Mapping[str, Value]]
# a label change's ``seen`` when no screen showed a value (store.history.set_label)
NOT_SHOWN: Any = object()

SUPPORT_TOKENS = frozenset(
    {"supported_without_sentence", "general", "well_known_fact", "numerical_reasoning"}
)
ANSWERABILITY = ("ANSWERABLE", "UNANSWERABLE", "PARTIAL", "CONVERSATIONAL", "UNDERSPECIFIED")
FACT_LABELS = ("S", "NS", "IR")
# DeepEval's idk is "borderline" in newer releases; only Faithfulness and Answer
# Relevancy have it (the contextual metrics' schemas take yes / no)
DEEPEVAL_VERDICTS = ("yes", "no", "idk")
VERDICTS = (0, 0.5, 1)
ENTAILMENT = ("Entailment", "Neutral", "Contradiction")  # RAGChecker's checker verdicts


@dataclass(frozen=True)
class LabelSpec:
    """A label of the catalogue: its target kind, value kind and values, and family."""

    name: str
    target: str  # target kind, see Record.targets
    kind: str  # bool | keys | choice | rating | number
    family: str
    meaning: str
    choices: tuple = ()
    default: Value = None  # value an absent label stands for (None: undefined)
    bounds: tuple[float, float] | None = None  # a number label's range (human values)
    # a choice label's positive class in its binary view (agreement's confusion matrix)
    positive: Value = None

    def cycle(self, current: Value) -> Value:
        """The next value for one-key cycling (`f`, `i`, `a`) or toggling."""
        if self.kind == "bool":
            return not bool(current)
        if self.kind == "choice":
            if current in self.choices:
                return self.choices[(self.choices.index(current) + 1) % len(self.choices)]
            return self.choices[0]
        raise ValueError(f"label {self.name!r} cannot be cycled")


# Every label of every registered family, in registration order: each family declares
# its own (``Family.catalogue`` in ragreview/families/), ``core.families.register``
# adds them here.
CATALOGUE: dict[str, LabelSpec] = {}


RUBRIC_FAMILY = "rubric"


def declared(record: Record | None, name: str) -> LabelSpec | None:
    """A record-level label declared by the record's own ``rubric`` field: the human
    metrics of an evaluation platform (InspectorRAGet's fluency, faithfulness, …), with
    their value set in its declared order (docs/formats.md). None when not declared."""
    rubric = None if record is None else record.data.get("rubric")
    entry = rubric.get(name) if isinstance(rubric, dict) else None
    if not isinstance(entry, dict) or name in CATALOGUE:
        return None
    meaning = str(entry.get("meaning") or name)
    if entry.get("kind") == "choice" and isinstance(entry.get("choices"), list):
        choices = tuple(entry["choices"])
        return LabelSpec(name, "record", "choice", RUBRIC_FAMILY, meaning, choices=choices)
    if entry.get("kind") == "number":
        given = entry.get("range")
        bounds = None
        if isinstance(given, list) and len(given) >= 2:
            low, high = given[0], given[1]
            if all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in (low, high)):
                bounds = (float(low), float(high))
        return LabelSpec(name, "record", "number", RUBRIC_FAMILY, meaning, bounds=bounds)
    return None


def spec(name: str, record: Record | None = None) -> LabelSpec:
    """The catalogue's label ``name``, or one that ``record`` declares (``declared``)."""
    try:
        return CATALOGUE[name]
    except KeyError:
        found = declared(record, name)
        if found is not None:
            return found
        raise RecordError(
            "name", f"unknown label {name!r} (known: {', '.join(CATALOGUE)})"
        ) from None


def parse_value_text(text: str) -> Value:
    """A VALUE given on the command line: JSON, or a bare word for enum values."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def coerce_value(
    label: LabelSpec, value: Value, record: Record | None = None, *, human: bool = True
) -> Value:
    """Validate ``value`` for ``label``; return it in canonical form.

    Human values are held to the documented ranges; judge values only to their type,
    because reference metrics define what out-of-range judge output means (e.g. a
    RAD-Bench rating of 0 scores 0.5).
    """
    name = label.name
    if label.kind == "bool":
        if isinstance(value, bool):
            return value
        if value in (0, 1) and not isinstance(value, float):
            return bool(value)
        raise RecordError("value", f"{name} takes true or false, got {json.dumps(value)}")
    if label.kind == "keys":
        if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
            raise RecordError("value", f"{name} takes a list of keys, got {json.dumps(value)}")
        if record is not None:
            out = []
            for k in value:
                if k in SUPPORT_TOKENS:
                    out.append(k)
                    continue
                resolved = resolve_target(record, "doc", k)
                if resolved is None:
                    raise RecordError("value", f"{name}: record has no document sentence {k!r}")
                out.append(resolved)
            return out
        return list(value)
    if label.kind == "choice":
        for choice in label.choices:
            if value == choice and type(value) is not bool:
                return choice
        if isinstance(value, str) and value.upper() in label.choices:
            return value.upper()
        if isinstance(value, int) and not isinstance(value, bool) and str(value) in label.choices:
            return str(value)  # a declared category "3" typed as the number 3
        allowed = ", ".join(json.dumps(c) for c in label.choices)
        raise RecordError("value", f"{name} takes one of {allowed}, got {json.dumps(value)}")
    if label.kind == "rating":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise RecordError("value", f"{name} takes a number, got {json.dumps(value)}")
        if human and not 1 <= value <= 10:
            raise RecordError("value", f"{name} takes a number from 1 to 10, got {value}")
        return value
    if label.kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise RecordError("value", f"{name} takes a number, got {json.dumps(value)}")
        low, high = label.bounds or (-math.inf, math.inf)
        if human and not low <= value <= high:
            raise RecordError("value", f"{name} takes a number from {low:g} to {high:g}")
        return value
    raise AssertionError(label.kind)


def check_label(
    record: Record, name: str, target: str, value: Value, *, human: bool = True
) -> tuple[str, Value]:
    """Validate one label against the record; return (resolved target, value)."""
    label = spec(name, record)
    resolved = resolve_target(record, label.target, target)
    if resolved is None:
        known = record.targets(label.target)
        hint = f" (it has {', '.join(known[:8])}{'…' if len(known) > 8 else ''})" if known else ""
        raise RecordError(
            "target",
            f"record {record.id!r} has no {label.target} key {target!r} for label {name!r}{hint}",
        )
    return resolved, coerce_value(label, value, record, human=human)


def check_layer(
    record: Record, layer: Any, field_name: str, *, human: bool = False
) -> dict[str, dict[str, Value]]:
    """Validate a whole label layer as found in a record's ``labels``."""
    if layer is None:
        return {}
    if not isinstance(layer, dict):
        raise RecordError(field_name, "expected an object {label: {target: value}}")
    out: dict[str, dict[str, Value]] = {}
    for name, targets in layer.items():
        where = f"{field_name}.{name}"
        if not isinstance(targets, dict):
            raise RecordError(where, "expected an object {target: value}")
        if name not in CATALOGUE and declared(record, name) is None:
            raise RecordError(where, f"unknown label {name!r}")
        checked = {}
        for target, value in targets.items():
            try:
                resolved, value = check_label(record, name, target, value, human=human)
            except RecordError as err:
                raise RecordError(f"{where}.{target}", err.message) from None
            checked[resolved] = value
        out[name] = checked
    return out


def effective(judge: Layer, human: Layer) -> dict[str, dict[str, Value]]:
    """Human overrides on top of the judge's labels: the only place they are merged."""
    merged = {name: dict(targets) for name, targets in judge.items()}
    for name, targets in human.items():
        merged.setdefault(name, {}).update(targets)
    return merged


def value_of(layer: Layer, name: str, target: str = "*") -> Value:
    """A label's value in a layer, or the catalogue's default when absent."""
    targets = layer.get(name)
    if targets is not None and target in targets:
        return targets[target]
    return CATALOGUE[name].default if name in CATALOGUE else None
