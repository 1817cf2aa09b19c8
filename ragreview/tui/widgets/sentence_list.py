"""The record's keyed items (document and response sentences, facts, statements, parts)
as rows with their label marks, and the cursor that one-key labels act on.

Record text is untrusted: every row is built from ``rich.text.Text`` objects, never
from markup strings, so ``[bold red]`` in a document shows exactly those characters.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from ...core.labels import ENTAILMENT
from ...core.record import Turn
from ..items import Item
from ..model import Mark, Review
from ..text import append, literal

BOOL_GLYPH = {True: "✓", False: "✗", None: "?"}
REASON_PREFIX = "judge ›"
LETTERS = {"relevant": "R", "utilized": "U"}
ENTAILMENT_LABELS = frozenset(
    ("answer2response", "response2answer", "retrieved2response", "retrieved2answer")
)


class ItemRow(Widget):
    """One cursor stop: key, label marks, text."""

    COMPONENT_CLASSES = {
        "item-row--key",
        "item-row--judge",
        "item-row--human",
        "item-row--override",
        "item-row--off",
        "item-row--keys",
    }

    class Clicked(Message):
        def __init__(self, row: ItemRow) -> None:
            self.row = row
            super().__init__()

    def __init__(
        self, index: int, item: Item, marks: list[Mark], reasons: list[tuple[str, str]]
    ) -> None:
        super().__init__(classes=f"-{item.kind}")
        self.index = index
        self.item = item
        self.marks = marks
        self.reasons = reasons  # the judge's (label, reason) shown under the text
        self._set_state_classes()

    def update_marks(self, marks: list[Mark], reasons: list[tuple[str, str]]) -> None:
        relayout = (
            self.item.kind == "response"
            or reasons != self.reasons
            or [m.rule for m in marks] != [m.rule for m in self.marks]
        )
        self.marks = marks
        self.reasons = reasons
        self._set_state_classes()
        # Only supporting keys, reasons and rules change the row's height; skip relayout
        # otherwise.
        self.refresh(layout=relayout)

    def _set_state_classes(self) -> None:
        by_name = {m.name: m for m in self.marks}
        rel, util = by_name.get("relevant"), by_name.get("utilized")
        sup = by_name.get("supported") or by_name.get("statement") or by_name.get("attributed")
        state = {
            "-relevant": bool(rel and rel.value),
            "-utilized": bool(util and util.value),
            "-unsupported": bool(sup and sup.value is False),
            "-overridden": any(m.human for m in self.marks),
            "-disagree": any(m.disagrees for m in self.marks),
        }
        # One style update per change: restyling a row costs milliseconds, once per class.
        add = [c for c, on in state.items() if on and not self.has_class(c)]
        remove = [c for c, on in state.items() if not on and self.has_class(c)]
        if remove:
            self.remove_class(*remove, update=not add)
        if add:
            self.add_class(*add)

    def _mark_style(self, mark: Mark) -> Style:
        if mark.disagrees:
            return self.get_component_rich_style("item-row--override")
        if mark.human:
            return self.get_component_rich_style("item-row--human")
        if mark.value in (False, None):
            return self.get_component_rich_style("item-row--off")
        return self.get_component_rich_style("item-row--judge")

    def render(self) -> Table:
        # Two columns so wrapped sentence text hangs under itself, not under the marks.
        head = Text(no_wrap=True)
        # ≠ the reviewer overrode the judge here; ≈ two judge runs differ here
        runs = any(m.runs_disagree for m in self.marks)
        head.append("≠" if self.has_class("-disagree") else "≈" if runs else " ")
        head.append(f"{self.item.key:>3} ", self.get_component_rich_style("item-row--key"))
        keys: list[str] | None = None
        support: Mark | None = None
        for mark in self.marks:
            if mark.name == "support_keys":
                support = mark
                keys = mark.value if isinstance(mark.value, list) else None
                continue
            head.append(_glyph(mark), self._mark_style(mark))
            head.append(" ")
        body = literal(self.item.text)
        muted = self.get_component_rich_style("item-row--keys")
        if keys and support is not None:
            append(body, "  ← " + " ".join(keys), muted + self._mark_style(support))
        if self.item.extra:
            append(body, f"  (from {self.item.extra})", muted)
        ruled = [m for m in self.marks if m.rule]
        for mark in ruled:  # the guideline rule the reviewer's value applies (T)
            named = f" ({mark.name})" if len(self.marks) > 1 else ""
            append(body, f"  rule {mark.rule}{named}", self._mark_style(mark))
        for name, why in self.reasons:
            body.append(f"\n{REASON_PREFIX} {name}: ", muted)
            append(body, why, muted)
        grid = Table.grid(expand=True)
        grid.add_column(no_wrap=True, width=head.cell_len)
        grid.add_column(ratio=1, overflow="fold")
        grid.add_row(head, body)
        return grid

    def on_click(self, event: events.Click) -> None:
        self.post_message(self.Clicked(self))


def _glyph(mark: Mark) -> str:
    if mark.name in LETTERS:
        return LETTERS[mark.name] if mark.value else "·"
    if mark.name == "context_useful":  # no default: "no verdict" differs from "not useful"
        return {True: "C", False: "·"}.get(mark.value, "?")
    if mark.name.startswith("deepeval_"):  # DeepEval's yes / no / idk verdicts
        return {"yes": "✓", "no": "✗", "idk": "~"}.get(mark.value, "?")
    if mark.name == "fact":
        return f"{mark.value or '?':<2}"
    if mark.name in ENTAILMENT_LABELS:  # RAGChecker: E / N / C
        return mark.value[0] if mark.value in ENTAILMENT else "?"
    return BOOL_GLYPH.get(mark.value, "?")


def _info(stored) -> Text:
    """``covid-1 · trace · reviewed by alice`` and the note, all literal text."""
    text = literal(stored.record.id)
    text.stylize("bold")
    if stored.record.task:
        append(text, f" · {stored.record.task}")
    status = stored.status
    if status == "reviewed" and stored.reviewed_by:
        status += f" by {stored.reviewed_by}"
    elif status == "stale":
        status += ": changed since it was reviewed"
    append(text, f" · {status}")  # the reviewer's name is untrusted text
    if stored.note:
        text.append("\n✎ ")
        append(text, stored.note)
    return text


class TurnRow(Static):
    """An earlier conversation turn, refilled when the turns fold or unfold."""

    def __init__(self, turn: Turn) -> None:
        super().__init__(classes="turn")
        self.turn = turn


class SentenceList(VerticalScroll, can_focus=False):
    """The open record's text and items, with a cursor over the items.

    Everything above the first item (id line, question, conversation, reference, the
    judge's record-level reasoning) is reached with Home, PageUp, or ``k`` on the first
    item; End goes to the bottom.
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows: list[ItemRow] = []
        self.cursor = 0
        self.show_reasons = True
        self.unfold_turns = False  # earlier conversation turns: one line each until `o`
        self.turns: list[TurnRow] = []

    def show(self, review: Review, cursor: int) -> None:
        """Replace the content with the open record, cursor on item ``cursor``."""
        assert review.stored is not None
        stored = review.stored
        rec = stored.record
        info = _info(stored)
        self.info = Static(info, classes="info")
        self._info_plain = info.plain
        widgets: list[Widget] = [self.info]
        for err in review.judge_errors:  # literal: a server's message is untrusted text
            line = literal(f"⚠ judge error ({err.model}, {err.task}, {err.at[:16]}): ")
            append(line, err.message)
            widgets.append(Static(line, classes="judge-error"))
        if review.conflicts:  # reviewers of a merged file disagreed here: adjudicate
            where = ", ".join(f"{name} {target}" for name, target in review.conflicts)
            line = literal(f"⚑ reviewer conflict: {where}")
            widgets.append(Static(line, classes="judge-error"))
        if rec.question:
            widgets.append(Static(_labelled("Q ", rec.question), classes="question"))
        turns = list(rec.conversation)
        if rec.question and turns and turns[-1].text.strip() == rec.question.strip():
            turns.pop()  # the current turn is the question shown above
        # The judged turn first (MT-RAG, InspectorRAGet): the response under judgement
        # right under its question, then the earlier turns folded to a line each.
        judged = bool(review.items) and review.items[0].kind == "response"
        judged_first = judged and bool(turns or review.rubric.names)
        self._section_reasons: list[tuple[Static, str]] = []
        self._placed: set[str] = set()
        self._section: str | None = None
        self.rows = []
        split = len(review.items)
        if judged_first:
            split = next((i for i, it in enumerate(review.items) if it.kind != "response"), split)
            widgets.extend(self._item_widgets(review, 0, split))
        self.turns = []
        self._turns_heading = Static(classes="heading")
        if turns:
            widgets.append(self._turns_heading)
        for turn in turns:
            turn_row = TurnRow(turn)
            self._fill_turn(turn_row)
            self.turns.append(turn_row)
            widgets.append(turn_row)
        for i, ref in enumerate(rec.references):
            head = "reference: " if len(rec.references) == 1 else f"reference {i + 1}: "
            widgets.append(Static(_labelled(head, ref), classes="reference"))
        # The judge's record-level reasoning: a verdict's at the top, a sentence label's
        # (RAGBench's relevance / adherence explanation) above the first of its items.
        self.record_reasons = Static(classes="reason")
        widgets.append(self.record_reasons)
        if judged_first:
            self._section = None  # the documents get their headings again
        widgets.extend(self._item_widgets(review, split if judged_first else 0, len(review.items)))
        self._fill_turns_heading()
        if not self.rows:
            widgets.append(Static(Text("(no keyed sentences in this record)"), classes="heading"))
        self.fill_record_reasons(review)
        self.cursor = min(cursor, max(0, len(self.rows) - 1))
        if self.rows:
            self.rows[self.cursor].add_class("-cursor")
        self.remove_children()
        self.mount_all(widgets)
        self.scroll_home(animate=False)
        # a cursor on an item no key labels (an MT-RAG response) need not be revealed
        self.reveal = bool(self.rows) and review.labelled(self.rows[self.cursor].item)
        self.call_after_refresh(self._reveal_cursor_from_top)

    def _item_widgets(self, review: Review, start: int, stop: int) -> list[Widget]:
        """Rows of items ``start``..``stop`` under their section headings."""
        widgets: list[Widget] = []
        for i in range(start, stop):
            item = review.items[i]
            if item.section != self._section:
                self._section = item.section
                widgets.append(Static(literal(item.section), classes="heading"))
                if item.kind not in self._placed and review.item_labels.get(item.kind):
                    self._placed.add(item.kind)
                    block = Static(classes="section-reason")
                    self._section_reasons.append((block, item.kind))
                    widgets.append(block)
            row = ItemRow(i, item, review.marks(item), self._reasons(review, item))
            self.rows.append(row)
            widgets.append(row)
        return widgets

    def _fill_turn(self, line: TurnRow) -> None:
        """An earlier turn: one line cut with … while folded, all of it unfolded."""
        turn = line.turn
        folded = not self.unfold_turns
        text = " ".join(turn.text.split()) if folded else turn.text
        line.set_class(folded, "-folded")  # one line, cut with … (app.tcss)
        line.update(_labelled(f"{turn.speaker}: ", text))

    def toggle_turns(self) -> bool:
        """``o``: unfold the earlier turns (or fold them back); kept from record to record."""
        self.unfold_turns = not self.unfold_turns
        for line in self.turns:
            self._fill_turn(line)
        self._fill_turns_heading()
        return self.unfold_turns

    def _fill_turns_heading(self) -> None:
        fold = "o unfolds" if not self.unfold_turns else "o folds"
        self._turns_heading.update(Text(f"conversation · {len(self.turns)} earlier turns · {fold}"))

    def _reasons(self, review: Review, item: Item) -> list[tuple[str, str]]:
        return review.item_reasons(item) if self.show_reasons else []

    def fill_record_reasons(self, review: Review) -> None:
        reasons = review.record_reasons() if self.show_reasons else []
        by_kind = {kind: names for kind, names in review.item_labels.items()}
        placed = {kind for _, kind in self._section_reasons}
        top = [
            (n, why) for n, why in reasons if not any(n in by_kind.get(kind, ()) for kind in placed)
        ]
        # the annotators' reasons for their values of declared human metrics (rubric)
        given = review.rubric.reasons(review.hidden) if self.show_reasons else []
        _reason_block(self.record_reasons, top, given)
        for block, kind in self._section_reasons:
            _reason_block(block, [(n, why) for n, why in reasons if n in by_kind[kind]])

    def refresh_info(self, review: Review) -> None:
        """Redraw the id/status/note line when the status or note changed."""
        if getattr(self, "info", None) is None or review.stored is None:
            return
        text = _info(review.stored)
        if text.plain != self._info_plain:
            self._info_plain = text.plain
            self.info.update(text)

    @property
    def item(self) -> Item | None:
        return self.rows[self.cursor].item if self.rows else None

    def move_to(self, index: int, *, scroll: bool = True) -> None:
        if not self.rows:
            return
        index = max(0, min(index, len(self.rows) - 1))
        self.rows[self.cursor].remove_class("-cursor")
        self.cursor = index
        self.rows[index].add_class("-cursor")
        if scroll:
            self._scroll_to_cursor()

    def step(self, delta: int) -> None:
        """``j``/``k``: next or previous item; before the first item, the record's top."""
        if delta < 0 and self.cursor == 0:
            self.scroll_home(animate=False)
            return
        self.move_to(self.cursor + delta)
        if self.cursor == 0:
            self.scroll_home(animate=False)  # nothing above the first item stays hidden

    def edge(self, end: bool) -> None:
        """Home / End: the top (id, question, conversation) or bottom of the record."""
        if self.rows:
            self.move_to(len(self.rows) - 1 if end else 0, scroll=False)
        if end:
            self.scroll_end(animate=False)
        else:
            self.scroll_home(animate=False)

    def page(self, pages: int) -> None:
        """Scroll a page; the cursor follows to the first item in view."""
        height = max(1, self.scrollable_content_region.height - 1)
        target = max(0, min(self.max_scroll_y, self.scroll_y + pages * height))
        self.scroll_to(y=target, animate=False)
        for row in self.rows:
            if row.virtual_region.y >= target:
                self.move_to(row.index, scroll=False)
                return
        if self.rows:
            self.move_to(len(self.rows) - 1, scroll=False)

    def _scroll_to_cursor(self) -> None:
        if self.rows:
            self.scroll_to_widget(self.rows[self.cursor], animate=False)

    def _reveal_cursor_from_top(self) -> None:
        """On opening: keep the top in view if the cursor fits below it; else scroll so
        a whole widget (never half a question) starts the view."""
        if not self.rows or not self.reveal:
            return
        row = self.rows[self.cursor].virtual_region
        height = self.scrollable_content_region.height
        if row.bottom <= height:
            return
        need = min(row.y, row.bottom - height)
        top = next((w.virtual_region.y for w in self.children if w.virtual_region.y >= need), row.y)
        self.scroll_to(y=top, animate=False)

    def toggle_reasons(self, review: Review) -> None:
        self.show_reasons = not self.show_reasons
        self.fill_record_reasons(review)
        self.refresh_marks(review)

    def refresh_marks(self, review: Review, index: int | None = None) -> None:
        """Redraw one row's marks (or all) from the review's committed labels."""
        targets = self.rows if index is None else [self.rows[index]]
        for row in targets:
            row.update_marks(review.marks(row.item), self._reasons(review, row.item))

    def on_item_row_clicked(self, message: ItemRow.Clicked) -> None:
        self.move_to(message.row.index)


def _reason_block(
    block: Static, reasons: list[tuple[str, str]], given: Sequence[tuple[str, str, str]] = ()
) -> None:
    """The judge's reasons, then ``given``: (annotator letter, metric, reason)."""
    text = Text(overflow="fold")
    lines = [(REASON_PREFIX, name, why) for name, why in reasons] + [
        (f"{who} ›", name, why) for who, name, why in given
    ]
    for i, (prefix, name, why) in enumerate(lines):
        text.append("\n" if i else "")
        append(text, f"{prefix} {name}: ", "bold")  # a metric's name comes from the file
        append(text, why)
    block.update(text)
    block.display = bool(lines)


def _labelled(head: str, value: str) -> Text:
    text = Text(head, overflow="fold")
    text.stylize("bold")
    return append(text, value)
