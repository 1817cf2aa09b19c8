"""The declared human metrics of an InspectorRAGet record (``core.rubric``) on the
review screen: which one ``w`` made active (the one ``+``/``-`` step), each annotator's
value and reason, and the numbers the metrics panel shows for them.

Annotators' labels never change during a review, so their per-record aggregates and
the dataset's sums of them are read once per dataset; a keystroke then reads only the
dataset's record-level overrides (a few rows) to move the reviewed means.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core import rubric as core_rubric
from ..core.labels import declared
from ..core.record import Record
from ..store.records import loads

if TYPE_CHECKING:
    import sqlite_utils

PREFIX = "rubric."  # the panel's family prefix for these metrics


def show_value(value: Any) -> str:
    """A declared value as the reviewer reads it: ``3``, ``66.67``, ``–`` for none."""
    if value is None:
        return "–"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f"{value:g}" if isinstance(value, float) else str(value)


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else f"#{i + 1}"


@dataclass(frozen=True)
class RubricLine:
    """One declared metric in the verdict bar."""

    name: str
    value: Any  # the reviewer's (the human layer's) value, None when unset
    human: bool
    annotators: tuple[tuple[str, str], ...]  # (letter, value shown)
    scale: str  # the declared values in order (``1 2 3 4``) or the range (``0–100``)
    active: bool
    shown: str = ""  # the reviewer's value with its declared name (``3 Mostly Yes``)
    meaning: str = ""  # the metric's description from the file (shown when active)


class _Dataset:
    """Per record the annotators' aggregate of each metric and the automatic metrics'
    stored values; the dataset's sums of both; the annotators' letters."""

    def __init__(self, db: sqlite_utils.Database, dataset: str) -> None:
        self.aggregates: dict[int, dict[str, float | None]] = {}
        self.entries: dict[str, Any] = {}
        stored_rows: list[dict[str, float | None]] = []
        letters: dict[str, str] = {}
        from ..store import reviewer_layers

        for rowid, data, given in reviewer_layers.layers(db, dataset):
            obj = loads(data)
            rubric = obj.get("rubric")
            if not isinstance(rubric, dict) or not rubric:
                continue
            for who in given:
                letters.setdefault(who, _letter(len(letters)))
            row = {}
            for name, entry in rubric.items():
                if isinstance(entry, dict) and entry.get("kind") in ("choice", "number"):
                    self.entries.setdefault(name, entry)
                    values = [layer[name] for layer in given.values() if name in layer]
                    row[name] = core_rubric.annotators_value(entry, values)
            self.aggregates[rowid] = row
            scores = obj.get("scores") or {}
            stored_rows.append(
                {n[len("stored.") :]: v for n, v in scores.items() if n.startswith("stored.")}
            )
        self.letters = letters
        self.judge = core_rubric.means(self.aggregates.values())
        self.sums: dict[str, tuple[float, int]] = {}
        for name in self.judge:
            defined = [v for a in self.aggregates.values() if (v := a.get(name)) is not None]
            self.sums[name] = (math.fsum(defined), len(defined))
        self.stored = core_rubric.means(stored_rows)

    def reviewed(self, overrides: dict[int, dict[str, Any]]) -> dict[str, float | None]:
        """The dataset's means with each reviewer's value in place of the annotators'."""
        out = {}
        for name, mean in self.judge.items():
            total, n = self.sums[name]
            parts = [total]
            for rowid, labels in overrides.items():
                if name not in labels or rowid not in self.aggregates:
                    continue
                own = core_rubric.as_number(self.entries[name], labels[name])
                theirs = self.aggregates[rowid].get(name)
                if own is None:
                    continue
                if theirs is not None:
                    parts.append(-theirs)
                    n -= 1
                parts.append(own)
                n += 1
            out[name] = math.fsum(parts) / n if n else mean
        return out


class RubricView:
    def __init__(self, db: sqlite_utils.Database, dataset: str) -> None:
        self.db = db
        self.dataset = dataset
        self.names: tuple[str, ...] = ()
        self.active: str | None = None  # kept from record to record
        self.record: Record | None = None
        self.rowid: int | None = None
        # metric -> [(annotator, value, reason)] of the open record
        self.given: dict[str, list[tuple[str, Any, str | None]]] = {}
        self._dataset: _Dataset | None = None

    def open(self, record: Record, rowid: int) -> None:
        self.record, self.rowid = record, rowid
        self.names = core_rubric.metric_names(record)
        if self.active not in self.names:
            self.active = self.names[0] if self.names else None
        self.given = {}
        if self.names:  # (the reviewers' values load only for records that declare metrics)
            from ..store import reviewer_layers

            for who, name, value, reason in reviewer_layers.of_record(self.db, rowid):
                self.given.setdefault(name, []).append((who, value, reason))

    @property
    def data(self) -> _Dataset:
        if self._dataset is None:
            self._dataset = _Dataset(self.db, self.dataset)
        return self._dataset

    def next_metric(self) -> str | None:
        if not self.names:
            return None
        at = self.names.index(self.active) if self.active in self.names else -1
        self.active = self.names[(at + 1) % len(self.names)]
        return self.active

    def value_name(self, name: str, value: Any) -> str:
        """A value with the name the file declares for it: ``3 Mostly Yes``."""
        if value is None:
            return "–"
        names = core_rubric.entry(self.record, name).get("names") if self.record else None
        spec = declared(self.record, name)
        if isinstance(names, list) and spec is not None and value in spec.choices:
            named = names[spec.choices.index(value)]
            if isinstance(named, str) and named != show_value(value):
                return f"{show_value(value)} {named}"
        return show_value(value)

    def meaning(self, name: str) -> str:
        """The metric's description from the file (InspectorRAGet's ``description``)."""
        if self.record is None:
            return ""
        meaning = core_rubric.entry(self.record, name).get("meaning")
        return meaning if isinstance(meaning, str) and meaning != name else ""

    def scale(self, name: str) -> str:
        assert self.record is not None
        spec = declared(self.record, name)
        if spec is None:
            return ""
        if spec.kind == "choice":
            sep = " · " if any(" " in self.value_name(name, c) for c in spec.choices) else " "
            return sep.join(self.value_name(name, c) for c in spec.choices)
        low, high = spec.bounds or (None, None)
        return f"{show_value(low)}–{show_value(high)}" if spec.bounds else "a number"

    def letters(self) -> list[tuple[str, str]]:
        """(letter, annotator) of the open record's annotators."""
        seen = dict.fromkeys(who for rows in self.given.values() for who, _, _ in rows)
        if not seen:
            return []
        known = self.data.letters
        return [(known.get(who, "?"), who) for who in seen]

    def lines(self, human: Mapping[str, Mapping[str, Any]], hidden: bool) -> list[RubricLine]:
        """One line per declared metric; the annotators' values stay hidden while blind."""
        if not self.names:
            return []
        out = []
        known = self.data.letters
        for name in self.names:
            mine = human.get(name, {})
            annotators = () if hidden else tuple(
                (known.get(who, "?"), show_value(v)) for who, v, _ in self.given.get(name, [])
            )  # fmt: skip
            out.append(
                RubricLine(
                    name,
                    mine.get("*"),
                    "*" in mine,
                    annotators,
                    self.scale(name),
                    name == self.active,
                    self.value_name(name, mine.get("*")),
                    self.meaning(name),
                )
            )
        return out

    def reasons(self, hidden: bool) -> list[tuple[str, str, str]]:
        """(annotator letter, metric, reason) the annotators gave, in metric order."""
        if hidden or not self.names:  # (no rubric: the dataset's annotators are never read)
            return []
        known = self.data.letters
        return [
            (known.get(who, "?"), name, why)
            for name in self.names
            for who, _, why in self.given.get(name, [])
            if why
        ]

    def panel(
        self, human: Mapping[str, Mapping[str, Any]]
    ) -> tuple[dict[str, dict[str, float | None]], dict[str, Any], frozenset[str]]:
        """The metrics panel's record and dataset values (annotators' aggregate →
        reviewed, under ``rubric.<metric>``) and the names shown as one value (the
        automatic metrics' stored scores)."""
        from ..store import reviewer_layers

        assert self.record is not None and self.rowid is not None
        data = self.data
        own = data.aggregates.get(self.rowid, {})
        record: dict[str, dict[str, float | None]] = {"judge": {}, "effective": {}}
        for name in self.names:
            theirs = own.get(name)
            given = human.get(name, {})
            mine = core_rubric.as_number(data.entries.get(name, {}), given.get("*"))
            record["judge"][PREFIX + name] = theirs
            record["effective"][PREFIX + name] = mine if "*" in given else theirs
        dataset: dict[str, Any] = {
            "judge": {PREFIX + n: v for n, v in data.judge.items()},
            "effective": {
                PREFIX + n: v
                for n, v in data.reviewed(
                    reviewer_layers.record_level_overrides(self.db, self.dataset)
                ).items()
            },
        }
        stored = {
            n[len("stored.") :]: v for n, v in self.record.scores.items() if n.startswith("stored.")
        }
        single = []
        for name, value in stored.items():
            for values in (record["judge"], record["effective"]):
                values[PREFIX + name] = value
            for layer in ("judge", "effective"):
                dataset[layer][PREFIX + name] = data.stored.get(name)
            single.append(PREFIX + name)
        return record, dataset, frozenset(single)
