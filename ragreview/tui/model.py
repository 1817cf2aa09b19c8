"""What the review screen shows and does, without Textual.

``Review`` holds the open record and the reviewer's session; every label change goes
through ``store.history`` synchronously (one short transaction) and only then is the
in-memory view reloaded, so the screen can never show a change that is not on disk.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.label_items import applies, task_family
from ..core.labels import CATALOGUE, Value, effective, value_of
from ..core.record import Record
from ..store import browse, history
from ..store import records as store_records
from ..store import settings as store_settings
from ..store.records import StoredRecord
from . import metrics_source

if TYPE_CHECKING:  # sqlite_utils imports click; the model needs no CLI
    import sqlite_utils

# Which label each one-key action sets, by the kind of item under the cursor.
ITEM_KEYS: dict[str, dict[str, str]] = {
    "relevant": {"doc": "relevant"},
    "utilized": {"doc": "utilized"},
    "supported": {
        "response": "supported",
        "statement": "statement",
        "reference_statement": "attributed",
        "part": "part_matched",
    },
    "fact": {"fact": "fact"},
}
# Labels an item of each kind carries (shown on its row, reverted by backspace).
ITEM_LABELS: dict[str, tuple[str, ...]] = {
    "doc": ("relevant", "utilized"),
    "response": ("supported", "support_keys"),
    "fact": ("fact",),
    "statement": ("statement",),
    "reference_statement": ("attributed",),
    "part": ("part_matched",),
}
VERDICTS = (
    "rejected",
    "error_detected",
    "idk",
    "underspecified",
    "answerability",
    "rb_llm_rating",
)


@dataclass(frozen=True)
class Item:
    """One cursor stop in the record view: a keyed sentence, fact, statement or part."""

    kind: str
    key: str
    text: str
    section: str  # heading the item is shown under
    extra: str | None = None  # e.g. the response sentence a fact came from


def items_of(rec: Record) -> list[Item]:
    """Cursor stops in display order: documents first, then response, facts, …"""
    out: list[Item] = []
    for i, doc in enumerate(rec.documents):
        section = f"doc {i}" + (f" · {doc.title}" if doc.title else "")
        out.extend(Item("doc", k, t, section) for k, t in doc.sentences)
    out.extend(Item("response", k, t, "response") for k, t in rec.response)
    out.extend(
        Item("part", f"p{i}", " | ".join(p), "answer parts") for i, p in enumerate(rec.answer_parts)
    )
    out.extend(Item("fact", f.key, f.text, "facts", f.sentence) for f in rec.facts)
    out.extend(Item("statement", k, t, "statements") for k, t in rec.statements)
    out.extend(
        Item("reference_statement", k, t, "reference statements")
        for k, t in rec.reference_statements
    )
    return out


@dataclass(frozen=True)
class Mark:
    """How one label on one target looks: the value shown and where it came from."""

    name: str
    value: Value
    judge: Value  # None while judge labels are hidden
    human: bool  # a human label exists
    disagrees: bool  # human value differs from the judge's


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
        self.settings: dict[str, Any] = store_settings.get_all(db, dataset)
        self.stored: StoredRecord | None = None
        self.items: list[Item] = []
        self._effective: dict[str, dict[str, Value]] = {}
        self._total: int | None = None

    # -- the open record --------------------------------------------------------------

    def open(self, rowid: int) -> None:
        self._reload(rowid)
        assert self.stored is not None
        self.items = items_of(self.stored.record)
        self.revealed = not self.blind

    def _reload(self, rowid: int | None = None) -> None:
        """Read the record and its layers back from the DB (after every write)."""
        if rowid is None:
            assert self.stored is not None
            rowid = self.stored.rowid
        self.stored = store_records.get(self.db, rowid)
        self._effective = effective(self.stored.judge, self.stored.human)

    @property
    def rowid(self) -> int:
        assert self.stored is not None
        return self.stored.rowid

    @property
    def hidden(self) -> bool:
        """Judge labels are hidden (a blind pass on this record)."""
        return self.blind and not self.revealed

    def first_cursor(self) -> int:
        """First document sentence, else first response sentence, else the first item."""
        for kind in ("doc", "response"):
            for i, item in enumerate(self.items):
                if item.kind == kind:
                    return i
        return 0

    def mark(self, name: str, target: str) -> Mark:
        assert self.stored is not None
        human_targets = self.stored.human.get(name, {})
        human = target in human_targets
        judge = value_of(self.stored.judge, name, target)
        if self.hidden:
            value = human_targets[target] if human else CATALOGUE[name].default
            return Mark(name, value, None, human, False)
        value = value_of(self._effective, name, target)
        return Mark(name, value, judge, human, human and value != judge)

    def marks(self, item: Item) -> list[Mark]:
        """The item's labels whose family applies to the record (no R/U noise on an RGB
        record's documents until someone labels them)."""
        assert self.stored is not None
        rec, layers = self.stored.record, (self.stored.judge, self.stored.human)
        # Nothing says what the record is (no known task, no labels yet): show them all.
        unknown = task_family(rec.task) is None and not any(layers)
        return [
            self.mark(name, item.key)
            for name in ITEM_LABELS[item.kind]
            if unknown or applies(rec, name, layers)
        ]

    def verdicts(self) -> list[Mark]:
        """Record-level verdicts that apply: those with a value or expected by the task."""
        assert self.stored is not None
        out = []
        for name in VERDICTS:
            m = self.mark(name, "*")
            if m.value is not None or m.judge is not None or m.human or name in self._expected():
                out.append(m)
        return out

    def _expected(self) -> tuple[str, ...]:
        assert self.stored is not None
        rec = self.stored.record
        if rec.answer_parts or rec.noise_rate is not None:
            return ("rejected",) + (("error_detected",) if rec.counterfactual else ())
        if rec.answerability is not None:
            return ("idk", "answerability")
        return ()

    def item_disagrees(self, item: Item) -> bool:
        return not self.hidden and any(m.disagrees for m in self.marks(item))

    # -- changes ------------------------------------------------------------------------

    def set(self, name: str, target: str, value: Value) -> int | None:
        """Commit one label (None reverts to the judge's); durable before this returns."""
        event = history.set_label(
            self.db,
            self.rowid,
            name,
            target,
            value,
            self.reviewer,
            session=self.session,
            blind=self.hidden,
        )
        self._reload()
        return event

    def cycle(self, name: str, target: str) -> int | None:
        """Toggle a boolean or step a choice label, starting from the value shown."""
        current = self.mark(name, target).value
        return self.set(name, target, CATALOGUE[name].cycle(current))

    def revert(self, item: Item | None) -> int:
        """Drop the human labels of an item (or of the record's verdicts when None)."""
        assert self.stored is not None
        names = ITEM_LABELS[item.kind] if item else VERDICTS
        target = item.key if item else "*"
        done = 0
        for name in names:
            if target in self.stored.human.get(name, {}):
                done += self.set(name, target, None) is not None
        return done

    def set_note(self, text: str | None) -> None:
        history.set_note(self.db, self.rowid, text or None, self.reviewer, self.session)
        self._reload()

    def mark_reviewed(self) -> None:
        history.mark(self.db, self.rowid, "reviewed", self.reviewer, self.session)
        self._reload()

    def undo(self, redo: bool = False) -> int | None:
        """Undo (or redo) this session's latest change; the rowid it touched."""
        step = history.redo if redo else history.undo
        event = step(self.db, self.reviewer, self.session)
        if event is None:
            return None
        rowid = store_records.find(self.db, event.record, event.dataset).rowid
        if self.stored is not None and rowid == self.rowid:
            self._reload()
        return rowid

    # -- numbers ------------------------------------------------------------------------

    def record_metrics(self) -> dict[str, dict[str, float | None]]:
        return metrics_source.record(self.db, self.rowid)

    def dataset_metrics(self) -> dict[str, Any]:
        return metrics_source.dataset(self.db, self.dataset)

    def progress(self) -> tuple[int, int]:
        """(reviewed, total); the total only changes on import, so it is counted once."""
        if self._total is None:
            self._total = browse.total_count(self.db, self.dataset)
        return browse.reviewed_count(self.db, self.dataset), self._total

    def variant(self) -> str:
        return f"trace={self.settings['trace.variant']} rgb={self.settings['rgb.variant']}"
