"""What the review screen shows and does, without Textual.

``Review`` holds the open record and the reviewer's session; every label change goes
through ``store.history`` synchronously (one short transaction) and only then is the
in-memory view reloaded, so the screen can never show a change that is not on disk.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core import families as fam
from ..core.labels import CATALOGUE, NOT_SHOWN, Value, effective, value_of
from ..core.record import Record
from ..core.rgb_rules import refusal
from ..services import run_reasons
from ..store import browse, guidelines, judge_store, metric_writes, run_layers
from ..store import records as store_records
from ..store import settings as store_settings
from ..store.records import StoredRecord
from .items import CELL_OF, KIND_NAMES, Item, items_of
from .numbers import NumberReader, Numbers
from .rubric import RubricView

if TYPE_CHECKING:  # sqlite_utils imports click; the model needs no CLI
    import sqlite_utils

    from ..store.event_reads import Event

# The writes (the label use case, store.history, store.item_edits) and the guidelines'
# parser are imported where a change is made: the first screen draws without them (issue
# 27: ≤ 2× a bare Textual app). The first change pays their import, a few milliseconds.

VERDICT_ORDER = (
    "verdict",
    "rejected",
    "error_detected",
    "not_addressed",
    "identified",
    "idk",
    "answerability",
    "underspecified",
    "rb_llm_rating",
)


@dataclass(frozen=True)
class Mark:
    """How one label on one target looks: the value shown and where it came from."""

    name: str
    value: Value
    judge: Value  # None while judge labels are hidden
    human: bool  # a human label exists
    disagrees: bool  # human value differs from the judge's
    runs_disagree: bool = False  # two judge runs gave this item different values
    rule: str | None = None  # the guideline rule the reviewer's value applies (docs/align.md)


@dataclass(frozen=True)
class KeyTarget:
    """What a label key does on the item under the cursor: set ``name`` on ``target``."""

    name: str
    target: str
    item: int | None  # index of the item (None: a record-level verdict)
    value: Value = None  # the value the key sets (None: it toggles or cycles)


class Refused(Exception):
    """A key that does not apply here; the message says why, in one line."""


class Review:
    def __init__(
        self,
        db: sqlite_utils.Database,
        dataset: str,
        reviewer: str,
        *,
        blind: bool = False,
        session: str | None = None,
    ) -> None:
        self.db = db
        self.dataset = dataset
        self.reviewer = reviewer
        self.blind = blind
        self.session = session or uuid.uuid4().hex[:12]
        self.revealed = not blind
        metric_writes.ensure(db, dataset)  # once: a DB from before metrics gets its rows
        self.settings: dict[str, Any] = store_settings.get_all(db, dataset)
        self.stored: StoredRecord | None = None
        # the open record's judge failures not yet fixed by a later run (shown under its id)
        self.judge_errors: list[judge_store.JudgeError] = []
        self.conflicts: list[tuple[str, str]] = []
        self.runs_disagree: set[tuple[str, str]] = set()  # (label, target) judge runs differ on
        self.rules: dict[tuple[str, str], str] = {}  # (label, target) -> guideline rule
        self.items: list[Item] = []
        self.families: tuple[fam.Family, ...] = ()
        # binding id -> {item kind: label}, for the keys that apply to the open record
        self.keys: dict[str, dict[str, str]] = {}
        self.key_values: dict[str, Value] = {}  # binding id -> the value it sets, if one
        self.item_labels: dict[str, tuple[str, ...]] = {}
        self.verdict_names: tuple[str, ...] = ()
        self.reasons: fam.Reasons = {}
        self.editable: tuple[str, ...] = ()  # item kinds the reviewer may add, delete, …
        self._effective: dict[str, dict[str, Value]] = {}
        self._numbers = NumberReader(db, dataset, self.settings)
        self.rubric = RubricView(db, dataset)  # human metrics a record declares itself
        self.last_step: Event | None = None  # the latest undo / redo

    # -- the open record --------------------------------------------------------------

    def open(self, rowid: int) -> None:
        self._reload(rowid)
        assert self.stored is not None
        # the latest failure per judge task: repeated re-judges of a bad record would
        # otherwise stack one line each above its text
        latest = {
            e.task: e for e in judge_store.iter_errors(self.db, record=rowid, unresolved=True)
        }
        self.judge_errors = list(latest.values())
        self.conflicts = browse.conflicts(self.db, rowid)  # left by `ragreview merge`
        rec = self.stored.record
        self.families = fam.families_of(rec, (self.stored.judge, self.stored.human))
        self.items = self._items(rec)
        # blind: the judge shows again once the record is marked reviewed
        self.revealed = not self.blind or self.stored.status == "reviewed"
        self.rubric.open(rec, rowid)  # its metrics exactly when the rubric family applies
        self._declare(rec)

    def _items(self, rec: Record) -> list[Item]:
        first = tuple(k for f in self.families for k in f.first)
        cells = any(k in CELL_OF for f in self.families for k in f.item_labels)
        return items_of(rec, first, cells)

    def _declare(self, rec: Record) -> None:
        """What the record's families declare: keys, row labels, verdicts, reasons."""
        assert self.stored is not None
        keys: dict[str, dict[str, str]] = {}
        values: dict[str, Value] = {}
        rows: dict[str, list[str]] = {}
        present = {item.kind for item in self.items} | {"record"}
        for family in self.families:
            for use in family.keys:
                if use.when is None or use.when(rec):
                    # only the item kinds this record has (no `s` without statements)
                    labels = {k: n for k, n in use.labels.items() if k in present}
                    if labels:
                        keys.setdefault(use.action, {}).update(labels)
                        if use.value is not None:
                            values[use.action] = use.value
            for kind, names in family.item_labels.items():
                shown = rows.setdefault(kind, [])
                shown.extend(n for n in names if n not in shown)
        self.keys = keys
        self.key_values = values
        self.item_labels = {kind: tuple(names) for kind, names in rows.items()}
        settable = {name for labels in keys.values() for name in labels.values()}
        self.verdict_names = (
            tuple(
                n
                for n in VERDICT_ORDER
                if n in settable and any(n in f.verdicts for f in self.families)
            )
            + self.rubric.names
        )
        # the reasoning of the run whose labels are shown (an imported row's or a run's)
        self.reasons = run_reasons.reasons(
            self.db, self.rowid, rec, self.families, self.stored.source
        )
        self.editable = tuple(k for f in self.families for k in f.editable)

    def _reload(self, rowid: int | None = None) -> None:
        """Read the record and its layers back from the DB (after every write)."""
        if rowid is None:
            assert self.stored is not None
            rowid = self.stored.rowid
        self.stored = store_records.get(self.db, rowid)
        self._effective = effective(self.stored.judge, self.stored.human)
        # (a re-judge in the background adds a run: re-read with the layers)
        self.runs_disagree = run_layers.disagreements(self.db, rowid)
        # the guideline rule each of the reviewers' values applies (the row shows it)
        self.rules = guidelines.label_rules(self.db, rowid)

    @property
    def rowid(self) -> int:
        assert self.stored is not None
        return self.stored.rowid

    @property
    def hidden(self) -> bool:
        """Judge labels are hidden (a blind pass on this record)."""
        return self.blind and not self.revealed

    def toggle_blind(self) -> None:
        """Reveal the judge's labels on a blind record, or hide them (blind mode on)."""
        if self.hidden:
            self.revealed = True
        else:
            self.blind = True
            self.revealed = False

    def leave_blind(self) -> None:
        self.blind = False
        self.revealed = True

    @property
    def family_names(self) -> str:
        return "+".join(f.name for f in self.families)

    def first_cursor(self) -> int:
        """First item that a key of the record's families labels, else the first item."""
        return next((i for i, item in enumerate(self.items) if self.labelled(item)), 0)

    def labelled(self, item: Item) -> bool:
        """A key of the record's families labels items of this kind."""
        return any(item.kind in labels for labels in self.keys.values())

    def key_target(self, action: str, item_index: int | None) -> KeyTarget:
        """The label a key sets here, or ``Refused`` saying where it applies."""
        assert self.stored is not None
        labels = self.keys.get(action)
        if not labels:
            raise Refused(f"not on this record ({self.family_names})")
        record, judge = self.stored.record, self.stored.judge
        why = next((w for n in labels.values() if (w := refusal(record, n, judge))), None)
        if why is not None:  # a label that cannot apply here (RGB without a prediction)
            raise Refused(why)
        if "record" in labels:
            return KeyTarget(labels["record"], "*", None)
        item = self.items[item_index] if item_index is not None and self.items else None
        if item is None or item.kind not in labels:
            kinds = ", ".join(KIND_NAMES[k] for k in labels)
            raise Refused(f"applies to {kinds}")
        name = labels[item.kind]
        return KeyTarget(name, item.target(name), item_index, self.key_values.get(action))

    def mark(self, name: str, target: str) -> Mark:
        assert self.stored is not None
        human_targets = self.stored.human.get(name, {})
        human = target in human_targets
        judge = value_of(self.stored.judge, name, target)
        rule = self.rules.get((name, target)) if human else None
        if self.hidden:
            value = human_targets[target] if human else value_of({}, name, target)
            return Mark(name, value, None, human, False, rule=rule)
        value = value_of(self._effective, name, target)
        runs = (name, target) in self.runs_disagree
        return Mark(name, value, judge, human, human and value != judge, runs, rule)

    def marks(self, item: Item) -> list[Mark]:
        """The item's labels that the record's families declare for its kind."""
        return [self.mark(name, item.target(name)) for name in self.item_labels.get(item.kind, ())]

    def verdicts(self) -> list[Mark]:
        """The record-level verdicts its families declare (and whose key applies)."""
        return [self.mark(name, "*") for name in self.verdict_names if name in CATALOGUE]

    def reason(self, name: str, target: str) -> str | None:
        return None if self.hidden else self.reasons.get((name, target))

    def item_reasons(self, item: Item) -> list[tuple[str, str]]:
        """(label, judge's reason) for the labels shown on the item."""
        out = []
        for name in self.item_labels.get(item.kind, ()):
            why = self.reason(name, item.target(name))
            if why:
                out.append((name, why))
        return out

    def record_reasons(self) -> list[tuple[str, str]]:
        """The judge's record-level reasoning (verdicts, TRACe's overall explanations)."""
        if self.hidden:
            return []
        return [(name, why) for (name, target), why in self.reasons.items() if target == "*"]

    def item_disagrees(self, item: Item) -> bool:
        return not self.hidden and any(m.disagrees for m in self.marks(item))

    # -- changes ------------------------------------------------------------------------

    def set(
        self,
        name: str,
        target: str,
        value: Value,
        reason: str | None = None,
        *,
        seen: Value = NOT_SHOWN,
        rule: str | None = None,
    ) -> int | None:
        """Commit one label (None reverts to the judge's); durable before this returns.
        ``rule``: the guideline rule it applies (``T``; a new rule on the same value is
        an event too).

        ``seen``: what this screen showed for it when the key was pressed (``key_value``),
        so the write is this reviewer's event even when another reviewer set the same
        value a moment before (store.history.set_label)."""
        from ..services import labels

        assert self.stored is not None
        event = labels.label(  # the label use case, shared with the CLI and the API
            self.db,
            self.dataset,
            self.stored.id,
            name,
            target,
            value,
            self.reviewer,
            reason=reason,
            session=self.session,
            blind=self.hidden,
            stored=self.stored,
            seen=seen,
            rule=rule,
        )
        self._reload()
        return event

    def cycle(self, name: str, target: str) -> int | None:
        """Toggle a boolean or step a choice label: the key resolves, from the value this
        screen shows, to the explicit value it means to set, which is what is written
        (never a toggle of what is stored by then)."""
        shown = self.mark(name, target).value
        return self.set(name, target, CATALOGUE[name].cycle(shown), seen=shown)

    def guidelines(self) -> tuple[str | None, dict[str, str]]:
        """The dataset's guidelines text (None: none attached) and its rules."""
        from ..core.guidelines import parse_rules

        text = guidelines.text(self.db, self.dataset)
        return text, ({} if text is None else parse_rules(text))

    def annotate(self, name: str, target: str, reason: str) -> int:
        """Attach a reason to the reviewer's label: an event that keeps the value."""
        from ..store import history

        assert self.stored is not None
        event = history.set_reason(
            self.db, self.rowid, name, target, reason, self.reviewer, self.session
        )
        self._reload()
        return event

    def revert(self, item: Item | None) -> int:
        """Drop the human labels of an item (or of the record's verdicts when None)."""
        assert self.stored is not None
        names = self.item_labels.get(item.kind, ()) if item else self.verdict_names
        if item is None and self.rubric.active:  # a declared metric: the active one only
            names = (self.rubric.active,)
        done = 0
        for name in names:
            target = item.target(name) if item else "*"
            human = self.stored.human.get(name, {})
            if target in human:
                done += self.set(name, target, None, seen=human[target]) is not None
        return done

    def edit_items(self, op: str, kind: str, key: str | None, text: str = "") -> str | None:
        """Add (after ``key``), delete, edit or split (at ``|``) a fact or statement;
        one event, metrics recomputed. The key of the item to put the cursor on."""
        from ..store import item_edits

        args = (self.db, self.rowid, kind)
        who = (self.reviewer, self.session)
        if op == "add":
            _, new = item_edits.add(*args, key, text, *who)
        elif op == "delete":
            assert key is not None
            _, new = item_edits.delete(*args, key, *who)
        elif op == "edit":
            assert key is not None
            _, new = item_edits.edit(*args, key, text, *who)
        else:
            assert key is not None
            _, new = item_edits.split(*args, key, text.split("|"), *who)
        self.refresh_items()
        return new

    def refresh_items(self) -> None:
        """Re-read the record after its items changed (an edit, its undo)."""
        self._reload()
        assert self.stored is not None
        self.items = self._items(self.stored.record)
        self._declare(self.stored.record)

    def set_note(self, text: str | None) -> None:
        from ..store import history

        history.set_note(self.db, self.rowid, text or None, self.reviewer, self.session)
        self._reload()

    def mark_reviewed(self) -> None:
        from ..services import labels

        assert self.stored is not None
        labels.mark(
            self.db, self.dataset, self.stored.id, True, self.reviewer, session=self.session
        )
        self._reload()

    def undo(self, redo: bool = False) -> int | None:
        """Undo (or redo) this session's latest change; the rowid it touched."""
        from ..store import history

        step = history.redo if redo else history.undo
        event = step(self.db, self.reviewer, self.session)
        self.last_step = event  # what it changed, for the status line
        if event is None:
            return None
        rowid = store_records.find(self.db, event.record, event.dataset).rowid
        if self.stored is not None and rowid == self.rowid:
            self.refresh_items()  # the step may have been a fact/statement edit
        return rowid

    # -- numbers ------------------------------------------------------------------------

    def metric_prefixes(self) -> tuple[str, ...]:
        return tuple(p for f in self.families for p in f.metrics)

    def metric_counts(self) -> frozenset[str]:
        return frozenset(c for f in self.families for c in f.counts)

    def numbers(self, *, metrics: bool = True, estimates: bool = True) -> Numbers:
        """What the screen shows after a change, each read once (``metrics``: the
        open record's and the dataset's metric values too; ``estimates``: the review
        draw's corrected estimates)."""
        rowid = self.stored.rowid if self.stored is not None else None
        return self._numbers.read(rowid, metrics=metrics, estimates=estimates)

    def variant(self) -> str:
        """The settings the open record's families read (``trace=ragbench``)."""
        names = [s for f in self.families for s in f.settings]
        short = {n: n.split(".")[0] if n.endswith(".variant") else n.split(".")[-1] for n in names}
        return " ".join(f"{short[n]}={self.settings.get(n)}" for n in names)
