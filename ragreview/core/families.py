"""What a record family is, and the registry every part of ragreview reads families from.

A family (TRACe, RGB, MT-RAG, ...) is declared once, in its own module of the
``ragreview.families`` package: its labels and their value sets, the key and footer
word of each label, its panels, its per-record metric function, its variants and
their sufficient statistics, and the one rule that says a record belongs to it
(``Family.owns_task``, and ``Family.evidence`` for a record whose task names no
family). ``ragreview.families`` registers the built-in ones when ``ragreview`` is
imported; ``register`` adds another (docs/contributing.md). Everything else reads
``FAMILIES``: the label catalogue (``core.labels.CATALOGUE``), which metric families
apply to a record (``core.metrics``), which labels a comparison counts
(``core.label_items``), the stats table's columns (``store.metric_stats_writes``), the
settings (``store.settings``), and the review screen's keys, footer, help and panels.
See docs/tui.md for what each key does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .labels import CATALOGUE, LabelSpec, Layer
from .record import Record

if TYPE_CHECKING:
    from .metrics.common import MetricFunction

Reasons = dict[tuple[str, str], str]  # (label, target) -> the judge's words


@dataclass(frozen=True)
class KeyUse:
    """One label key of a family: ``key`` sets ``labels[kind]`` on an item of that kind
    (kind ``record`` = a record-level verdict). The letter is written here only: the
    review screen's bindings, footer and help read it (``tui.actions``)."""

    action: str  # binding id of the review action (tui/actions.py)
    key: str  # the key as typed and shown in the footer and help: one character
    word: str  # footer word
    labels: Mapping[str, str]  # item kind -> label name
    when: Callable[[Record], bool] | None = None  # applies only to such records
    value: Any = None  # the value the key sets (None: it toggles or steps the label)


@dataclass(frozen=True)
class Variant:
    """A dataset setting that picks how the family's metrics are computed.

    ``allowed``: the values (a tuple) or their type (``int``: a positive integer).
    When the family declares ``stats``, ``store.metric_stats_writes`` may apply a change of
    this setting as SQL over the stored stats instead of recomputing every record;
    a test holds the SQL and the Python forms equal on every declared value."""

    setting: str
    default: Any
    allowed: Any


@dataclass(frozen=True)
class Family:
    """A record family, declared once in its module of ``ragreview.families``."""

    name: str
    title: str
    keys: tuple[KeyUse, ...]
    item_labels: Mapping[str, tuple[str, ...]]  # item kind -> labels shown on its row
    verdicts: tuple[str, ...] = ()  # record-level labels shown in the verdict bar
    metrics: tuple[str, ...] = ()  # metric-name prefixes shown in the panel
    settings: tuple[str, ...] = ()  # dataset settings shown in the header
    # the record's task says it is of this family: one of ``tasks`` (default: the
    # family's name), or any task starting with ``task_prefix``
    tasks: tuple[str, ...] | None = None
    task_prefix: str = ""
    # item kinds shown first (the ones its keys label), before documents and response
    first: tuple[str, ...] = ()
    counts: tuple[str, ...] = ()  # metrics that count (shown without decimals)
    editable: tuple[str, ...] = ()  # item kinds a reviewer may add, delete, edit, split
    reasons: Callable[[Record, Any], Reasons] = field(default=lambda rec, src: {})
    # a record is in the family whatever its task when this says so (a rubric it carries)
    claims: Callable[[Record], bool] | None = None
    # the family's labels, with their targets and value sets (``core.labels``)
    catalogue: tuple[LabelSpec, ...] = ()
    # the per-record metrics; None: the family has none of its own
    compute: MetricFunction | None = None
    # a record whose task names no family gets this family's metrics when this says so
    # (default: one of the family's labels is in the layer)
    evidence: Callable[[Record, Layer], bool] | None = None
    # sufficient statistics ``compute`` gives ``into``: name -> SQL column type
    stats: tuple[tuple[str, str], ...] = ()
    variants: tuple[Variant, ...] = ()
    # a record that says nothing (no family's task, no family's labels) shows this
    # family's keys when this says so
    unclaimed: bool | Callable[[Record], bool] = True
    # its metrics read the record's parsed source row of this format (docs/formats.md
    # ``source``), which the importer keeps whole for them (``core.metrics.with_source``)
    source_format: str | None = None
    # the zstd level its source lines are packed at, where measured to pack as small at a
    # faster level than ``store.source_blob.LEVEL`` (None: that level)
    source_level: int | None = None
    # the judge task (``services/judge/tasks.py``) that ``ragreview judge --task auto``
    # runs on its records; None: auto skips them
    judge_task: str | None = None

    def owns_task(self, task: str | None) -> bool:
        """The one rule that says a record's task is of this family."""
        if not task:
            return False
        tasks = (self.name,) if self.tasks is None else self.tasks
        return task in tasks or bool(self.task_prefix) and task.startswith(self.task_prefix)

    def labels(self) -> set[str]:
        names = {n for names in self.item_labels.values() for n in names}
        return names | set(self.verdicts)

    def has_evidence(self, record: Record, labels: Layer) -> bool:
        if self.evidence is not None:
            return self.evidence(record, labels)
        return any(labels.get(spec.name) for spec in self.catalogue)


# The registry: the built-in families (``ragreview.families``) and any registered later,
# in registration order (the catalogue's order, the help screen's, the panel's).
FAMILIES: list[Family] = []
BY_NAME: dict[str, Family] = {}
_FAMILY_OF_LABEL: dict[str, Family] = {}
_BY_TASK: dict[str | None, Family | None] = {}
_COMPUTED_BY_TASK: dict[str | None, list[Family]] = {}  # (metric_families)


def register(family: Family) -> Family:
    """Add a family: its labels join the catalogue, its settings the known settings,
    its stats the stats table (created when a database is next opened)."""
    if family.name in BY_NAME:
        raise ValueError(f"family {family.name!r} is registered already")
    for spec in family.catalogue:
        if spec.name in CATALOGUE:
            raise ValueError(f"label {spec.name!r} is declared by two families")
        if spec.family != family.name:
            raise ValueError(f"label {spec.name!r} names family {spec.family!r}")
    FAMILIES.append(family)
    BY_NAME[family.name] = family
    _BY_TASK.clear()
    _COMPUTED_BY_TASK.clear()
    CATALOGUE.update((spec.name, spec) for spec in family.catalogue)
    for name in family.labels():
        _FAMILY_OF_LABEL.setdefault(name, family)
    return family


def unregister(name: str) -> None:
    """Remove a registered family (a test's toy family, after the test)."""
    family = BY_NAME.pop(name)
    FAMILIES.remove(family)
    _BY_TASK.clear()
    _COMPUTED_BY_TASK.clear()
    for spec in family.catalogue:
        CATALOGUE.pop(spec.name, None)
    _FAMILY_OF_LABEL.clear()
    for f in FAMILIES:
        for label in f.labels():
            _FAMILY_OF_LABEL.setdefault(label, f)


def task_family(task: str | None) -> Family | None:
    """The family a task names, if any (the first registered that owns it)."""
    try:
        return _BY_TASK[task]
    except KeyError:  # (asked per record: remembered per task until a registration)
        found = _BY_TASK[task] = next((f for f in FAMILIES if f.owns_task(task)), None)
        return found


def metric_families(record: Record, labels: Layer) -> list[Family]:
    """The families whose metrics a record gets: its task's; a record whose task names
    no family gets every family it shows evidence of (``Family.evidence``)."""
    try:
        own = _COMPUTED_BY_TASK[record.task]
    except KeyError:  # (asked per record: remembered per task until a registration)
        own = _COMPUTED_BY_TASK[record.task] = [
            f for f in FAMILIES if f.compute is not None and f.owns_task(record.task)
        ]
    if own:
        return list(own)
    return [f for f in FAMILIES if f.compute is not None and f.has_evidence(record, labels)]


def variants() -> dict[str, Variant]:
    """Every registered family's settings, by name."""
    return {v.setting: v for f in FAMILIES for v in f.variants}


def families_of(record: Record, layers: tuple[Mapping[str, Any], ...] = ()) -> tuple[Family, ...]:
    """The families whose keys and panels the review screen shows for a record: its
    task's, plus any whose labels a layer gives it. A record that says nothing (no known
    task, no labels) gets every family that ``unclaimed`` admits."""
    found = [f for f in FAMILIES if f.owns_task(record.task) or (f.claims and f.claims(record))]
    for layer in layers:
        for name in layer:
            family = _FAMILY_OF_LABEL.get(name)
            if family is not None and family not in found:
                found.append(family)
    if found:
        return tuple(found)
    return tuple(
        f
        for f in FAMILIES
        if f.claims is None and (f.unclaimed(record) if callable(f.unclaimed) else f.unclaimed)
    )


# The human metrics an InspectorRAGet record declares (core.rubric): a key that acts on
# the metric chosen with `w`, not on one fixed label, names RUBRIC_LABEL instead.
RUBRIC_LABEL = "<declared metric>"


def family_of_label(name: str) -> Family:
    return _FAMILY_OF_LABEL[name]


def reasons(record: Record, families: tuple[Family, ...], source: str | None) -> Reasons:
    """The judge's reasoning per (label, target) found in the record's source row."""
    try:
        src = json.loads(source) if source else None
    except ValueError:
        src = None
    out: Reasons = {}
    for family in families:
        out.update(family.reasons(record, src))
    return out
