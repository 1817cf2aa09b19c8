"""The review screen: the label keys on top of the record screen's frame.

Each label action writes through ``Review`` (one durable transaction on the UI thread)
and only then redraws the row, the verdict bar, the metrics and the list entry. What a
key sets comes from the open record's family (``core.families``); elsewhere it changes
nothing and the status line says why.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import ClassVar

from textual.binding import BindingType

from ...core import rubric
from ...core.errors import RagreviewError, RecordError
from ...core.families import RUBRIC_LABEL
from ...core.labels import CATALOGUE, declared
from .. import actions
from ..items import KIND_NAMES
from ..model import Refused
from .record_lists import RecordLists

# The prompt and guidelines screens are imported by the keys that open them: the first
# screen draws without them (issue 27).

NO_GUIDELINES = "no guidelines for this dataset: attach them with `ragreview guidelines PATH FILE`"


class ReviewScreen(RecordLists):
    BINDINGS: ClassVar[list[BindingType]] = [*actions.bindings()]

    def action_label(self, action_id: str) -> None:
        """A label key: set what the record's family declares for the item under the
        cursor; where it does not apply, nothing changes and one line says why."""
        if self.review.stored is None:
            return
        action = actions.BY_ID[action_id]
        try:
            where = self.review.key_target(action_id, self.sentences.cursor)
        except Refused as why:
            self.notify(f"{action.shown} ({action.title.lower()}): {why}", severity="warning")
            return
        if where.name == RUBRIC_LABEL:
            self._rubric_key(action)
            return
        if where.item is None:  # a verdict: ⌫ now reverts this one (▸ in the bar)
            self.verdict_cursor = where.name
        kind = CATALOGUE[where.name].kind
        if kind == "rating":
            self._prompt_rating(where.name)
            return
        if kind == "keys":
            self._prompt_keys(where.name, where.target, self.sentences.cursor)
            return
        # A context-level label shows on every sentence of its document: redraw them all.
        item = self.sentences.item
        index = where.item if item is not None and where.target == item.key else None
        if where.value is not None:  # one key per value (DeepEval's y / N / I, RAGChecker's)
            value, shown = where.value, self.review.mark(where.name, where.target).value
            change = lambda: self.review.set(where.name, where.target, value, seen=shown)  # noqa: E731
        else:
            change = lambda: self.review.cycle(where.name, where.target)  # noqa: E731
        if self._commit(change, index):
            if where.item is not None and index is None:
                self.sentences.refresh_marks(self.review)
            self._said(where.name, where.target)

    def _rubric_key(self, action: actions.ReviewAction) -> None:
        """``w`` picks the declared metric; ``+``/``-`` step it through its declared
        values (at either end nothing is written and the status line says so)."""
        view = self.review.rubric
        if action.id == "next-metric":
            name = view.next_metric()
            self.refresh_record()
            self.notify(f"{name}: + and - step it ({view.scale(name or '')})")
            return
        name = view.active
        assert name is not None and self.review.stored is not None
        current = self.review.mark(name, "*").value
        spec = declared(self.review.stored.record, name)
        assert spec is not None
        value = rubric.step(spec, current, up=action.id == "step-up")
        if value is None:
            end = "highest" if action.id == "step-up" else "lowest"
            self.notify(f"{name}: already the {end} value ({view.scale(name)})", severity="warning")
            return
        if self._commit(lambda: self.review.set(name, "*", value, seen=current), None):
            self.notify(f"{name}: {view.value_name(name, value)}")

    def _said(self, name: str, target: str) -> None:
        """The status line's word on a label key: what the label now is."""
        value = self.review.mark(name, target).value
        where = "" if target == "*" else f" {target}"
        self.notify(f"{name}{where}: {json.dumps(value, ensure_ascii=False)} (⌫ reverts)")

    def _prompt_rating(self, name: str) -> None:
        """The RAD-Bench rating (1–10); empty drops yours (the judge's shows)."""
        from .prompt import PromptScreen

        assert self.review.stored is not None
        current = self.review.mark(name, "*").value

        def done(text: str | None) -> None:
            if text is None:
                return
            text = text.strip()
            if not text:  # back to the judge's: meant only if a label of a reviewer showed
                assert self.review.stored is not None
                mine = self.review.stored.human.get(name, {}).get("*")
                self._commit(lambda: self.review.set(name, "*", None, seen=mine), None)
                return
            try:
                number = float(text)
            except ValueError:
                self.notify(f"rating: not a number: {text!r}", severity="error")
                return
            value = int(number) if number.is_integer() else number
            self._commit(lambda: self.review.set(name, "*", value, seen=current), None)

        self.app.push_screen(
            PromptScreen(
                f"Rating of {self.review.stored.id}",
                "" if current is None else str(current),
                "a number from 1 to 10; empty: back to the judge's",
            ),
            done,
        )

    def _prompt_keys(self, name: str, target: str, index: int) -> None:
        from .prompt import PromptScreen

        current = self.review.mark(name, target).value or []

        def done(text: str | None) -> None:
            if text is None:
                return
            keys = [k for k in re.split(r"[\s,]+", text.strip()) if k]
            self._commit(lambda: self.review.set(name, target, keys, seen=current), index)

        self.app.push_screen(
            PromptScreen(
                f"Supporting keys of {target}",
                " ".join(current),
                "document keys or general / well_known_fact / numerical_reasoning / "
                "supported_without_sentence",
            ),
            done,
        )

    def action_revert(self) -> None:
        """``⌫``: your labels on the item under the cursor, else your verdict under the
        verdict cursor (the last verdict key used; on a rubric the active metric)."""
        if self.review.stored is None:
            return
        item = self.sentences.item
        done = self.review.revert(item) if item else 0
        if done:
            self.refresh_record(rows=True)
            self.notify(f"reverted {item.key if item else ''} to the judge's (^z undoes)")
            return
        name = self.review.rubric.active or self.verdict_cursor
        human = self.review.stored.human
        if name is None or "*" not in human.get(name, {}):
            own = [n for n in self.review.verdict_names if "*" in human.get(n, {})]
            if len(own) != 1:
                hint = (
                    f" (verdicts of yours: {', '.join(own)}; a verdict key picks one)"
                    if own
                    else ""
                )
                self.notify(f"no label of yours to revert here{hint}", severity="warning")
                return
            name = own[0]
        if self._commit(lambda: self.review.set(name, "*", None), None):
            self.notify(f"reverted your {name} to the judge's (^z undoes)")

    def action_revert_record(self) -> None:
        """``X``: every label of yours on the record, after a yes."""
        from .prompt import PromptScreen

        if self.review.stored is None:
            return
        human = self.review.stored.human
        own = [(n, t) for n, targets in human.items() for t in targets if not n.startswith("_")]
        if not own:
            self.notify("no label of yours on this record")
            return
        rid = self.review.stored.id

        def done(text: str | None) -> None:
            if text is None or text.strip().lower() not in ("y", "yes"):
                self.notify("record not reverted")
                return
            count = 0

            def revert_all() -> None:
                nonlocal count
                for name, target in own:
                    count += self.review.set(name, target, None) is not None

            if self._commit(revert_all, None):
                self.refresh_record(rows=True)
                self.notify(
                    f"reverted {count} labels of {rid} to the judge's (^z × {count} undoes)"
                )

        self.app.push_screen(
            PromptScreen(
                f"Revert all {len(own)} labels of yours on {rid}?", "", "y reverts; esc keeps them"
            ),
            done,
        )

    def _own_labels(self) -> list[tuple[str, str]]:
        """(label, target) of the reviewer's labels on the item, else on the verdicts."""
        assert self.review.stored is not None
        human = self.review.stored.human
        item = self.sentences.item
        if item is not None:
            found = [
                (n, item.target(n))
                for n in self.review.item_labels.get(item.kind, ())
                if item.target(n) in human.get(n, {})
            ]
            if found:
                return found
        active = self.review.rubric.active  # a declared metric: the active one first
        names = sorted(self.review.verdict_names, key=lambda n: n != active)
        return [(n, "*") for n in names if "*" in human.get(n, {})]

    def action_reason(self) -> None:
        """Attach a reason to the reviewer's label under the cursor (or on a verdict)."""
        from .prompt import PromptScreen

        if self.review.stored is None:
            return
        own = self._own_labels()
        if not own:
            self.notify("no label of yours here to give a reason for", severity="warning")
            return
        name, target = own[0]

        def done(text: str | None) -> None:
            if text and text.strip():
                if self._commit(lambda: self.review.annotate(name, target, text.strip()), None):
                    self.notify(f"reason kept on {name} {target}")

        self.app.push_screen(
            PromptScreen(f"Reason for your {name} on {target}", "", "kept in the event log"),
            done,
        )

    def action_guidelines(self) -> None:
        """``H``: the dataset's guidelines and their rule ids."""
        from . import guidelines as guidelines_screens

        text, rules = self.review.guidelines()
        if text is None:
            self.notify(NO_GUIDELINES, severity="warning")
            return
        self.app.push_screen(guidelines_screens.GuidelinesScreen(self.review.dataset, text, rules))

    def action_pick_rule(self) -> None:
        """``T``: name the guideline rule the reviewer's label under the cursor applies
        (a correction first, where the item has several labels of theirs): the same
        value, written again with the rule, so undo and redo carry the rule."""
        from . import guidelines as guidelines_screens

        if self.review.stored is None:
            return
        text, rules = self.review.guidelines()
        if not rules:
            why = NO_GUIDELINES if text is None else "the guidelines define no rules (R1, R2, …)"
            self.notify(why, severity="warning")
            return
        own = self._own_labels()
        if not own:
            self.notify("no label of yours here to name a rule for", severity="warning")
            return
        marks = {(n, t): self.review.mark(n, t) for n, t in own}
        name, target = next((k for k, m in marks.items() if m.disagrees), own[0])
        current = marks[(name, target)].rule
        item = self.sentences.item
        # (a context-level label shows on every sentence of its document: redraw them all)
        index = self.sentences.cursor if item is not None and target == item.key else None

        def done(rule: str | None) -> None:
            if rule is None:
                return
            if rule == current:
                self.notify(f"{name} {target} already applies rule {rule}")
                return
            assert self.review.stored is not None
            # the value shown now (another reviewer's write may have been shown since)
            value = self.review.stored.human.get(name, {}).get(target)
            if value is None:
                self.notify(f"no label of yours on {name} {target} any more", severity="warning")
                return
            change = lambda: self.review.set(name, target, value, seen=value, rule=rule)  # noqa: E731
            if self._commit(change, index):
                if item is not None and index is None and target != "*":
                    self.sentences.refresh_marks(self.review)
                self.notify(f"{name} {target}: rule {rule} (^z undoes)")

        where = "" if target == "*" else f" on {target}"
        self.app.push_screen(
            guidelines_screens.RulePicker(f"Rule your {name}{where} applies", rules, current),
            done,
        )

    def action_items(self, op: str) -> None:
        """A / D / E / S: add, delete, edit or split a fact or statement, where the
        record's family lets the reviewer correct the judge's decomposition."""
        from .prompt import PromptScreen

        if self.review.stored is None:
            return
        item = self.sentences.item
        editable = self.review.editable
        if not editable:
            self.notify(f"no facts or statements to edit here ({self.review.family_names})")
            return
        on_item = item is not None and item.kind in editable
        if op != "add" and not on_item:
            kinds = ", ".join(KIND_NAMES[k] for k in editable)
            self.notify(f"{op} applies to {kinds}", severity="warning")
            return
        kind = item.kind if on_item and item else editable[0]
        key = item.key if on_item and item else None
        what = KIND_NAMES[kind][:-1]

        def run(text: str) -> None:
            try:
                new = self.review.edit_items(op, kind, key, text)
            except (RagreviewError, RecordError, sqlite3.Error) as err:
                self.notify(f"not saved: {err}", severity="error")
                return
            self._rebuild(new)
            self.notify(f"{op}: {what} {new} (^z undoes)")

        if op == "delete":
            run("")
            return
        current = item.text if on_item and item else ""
        title = {
            "add": f"New {what}" + (f" after {key}" if key else ""),
            "edit": f"Text of {key}",
            "split": f"Split {key}: put | at each cut",
        }[op]
        self.app.push_screen(
            PromptScreen(title, "" if op == "add" else current, "enter saves, esc cancels"),
            lambda text: run(text) if text is not None else None,
        )

    def action_toggle_reasons(self) -> None:
        self.sentences.toggle_reasons(self.review)
        shown = "shown" if self.sentences.show_reasons else "hidden"
        self.notify(f"judge reasoning {shown}")
