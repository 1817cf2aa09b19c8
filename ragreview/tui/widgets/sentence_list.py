"""The record's keyed items (document and response sentences, facts, statements, parts)
as rows with their label marks, and the cursor that one-key labels act on.

Record text is untrusted: every row is built from ``rich.text.Text`` objects, never
from markup strings, so ``[bold red]`` in a document shows exactly those characters.
"""

from __future__ import annotations

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from ...core.safe_text import printable
from ..model import Item, Mark, Review

BOOL_GLYPH = {True: "✓", False: "✗", None: "?"}
LETTERS = {"relevant": "R", "utilized": "U"}


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

    def __init__(self, index: int, item: Item, marks: list[Mark]) -> None:
        super().__init__(classes=f"-{item.kind}")
        self.index = index
        self.item = item
        self.marks = marks
        self._set_state_classes()

    def update_marks(self, marks: list[Mark]) -> None:
        self.marks = marks
        self._set_state_classes()
        # Only supporting keys can change the row's height; skip relayout otherwise.
        self.refresh(layout=self.item.kind == "response")

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
        head.append("≠" if self.has_class("-disagree") else " ")
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
        body = Text(printable(self.item.text))  # literal: never markup, no escapes
        muted = self.get_component_rich_style("item-row--keys")
        if keys and support is not None:
            body.append("  ← " + printable(" ".join(keys)), muted + self._mark_style(support))
        if self.item.extra:
            body.append(f"  (from {printable(self.item.extra)})", muted)
        grid = Table.grid(expand=True)
        grid.add_column(no_wrap=True, width=head.cell_len)
        grid.add_column(ratio=1)
        grid.add_row(head, body)
        return grid

    def on_click(self, event: events.Click) -> None:
        self.post_message(self.Clicked(self))


def _glyph(mark: Mark) -> str:
    if mark.name in LETTERS:
        return LETTERS[mark.name] if mark.value else "·"
    if mark.name == "context_useful":  # no default: "no verdict" differs from "not useful"
        return {True: "C", False: "·"}.get(mark.value, "?")
    if mark.name == "fact":
        return f"{mark.value or '?':<2}"
    return BOOL_GLYPH.get(mark.value, "?")


def _info(stored) -> Text:
    """``covid-1 · trace · reviewed by alice`` and the note, all literal text."""
    text = Text(printable(stored.record.id), style="bold")
    if stored.record.task:
        text.append(f" · {printable(stored.record.task)}")
    status = stored.status
    if status == "reviewed" and stored.reviewed_by:
        status += f" by {printable(stored.reviewed_by)}"
    elif status == "stale":
        status += ": changed since it was reviewed"
    text.append(f" · {status}")
    if stored.note:
        text.append("\n✎ ")
        text.append(printable(stored.note))
    return text


class SentenceList(VerticalScroll, can_focus=False):
    """The open record's text and items, with a cursor over the items."""

    class CursorMoved(Message):
        def __init__(self, index: int) -> None:
            self.index = index
            super().__init__()

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows: list[ItemRow] = []
        self.cursor = 0

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
            line = Text(printable(f"⚠ judge error ({err.model}, {err.task}, {err.at[:16]}): "))
            line.append(printable(err.message))
            widgets.append(Static(line, classes="judge-error"))
        if rec.question:
            question = printable(rec.question)
            widgets.append(Static(Text.assemble(("Q ", "bold"), question), classes="question"))
        for turn in rec.conversation:
            widgets.append(
                Static(
                    Text.assemble((printable(f"{turn.speaker}: "), "bold"), printable(turn.text)),
                    classes="turn",
                )
            )
        self.rows = []
        section = None
        for i, item in enumerate(review.items):
            if item.section != section:
                section = item.section
                widgets.append(Static(Text(printable(section)), classes="heading"))
            row = ItemRow(i, item, review.marks(item))
            self.rows.append(row)
            widgets.append(row)
        if not self.rows:
            widgets.append(Static(Text("(no keyed sentences in this record)"), classes="heading"))
        self.cursor = min(cursor, max(0, len(self.rows) - 1))
        if self.rows:
            self.rows[self.cursor].add_class("-cursor")
        self.remove_children()
        self.mount_all(widgets)
        self.scroll_home(animate=False)
        self.call_after_refresh(self._scroll_to_cursor)

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

    def move_to(self, index: int) -> None:
        if not self.rows:
            return
        index = max(0, min(index, len(self.rows) - 1))
        self.rows[self.cursor].remove_class("-cursor")
        self.cursor = index
        self.rows[index].add_class("-cursor")
        self._scroll_to_cursor()
        self.post_message(self.CursorMoved(index))

    def _scroll_to_cursor(self) -> None:
        if self.rows:
            self.scroll_to_widget(self.rows[self.cursor], animate=False)

    def refresh_marks(self, review: Review, index: int | None = None) -> None:
        """Redraw one row's marks (or all) from the review's committed labels."""
        targets = self.rows if index is None else [self.rows[index]]
        for row in targets:
            row.update_marks(review.marks(row.item))

    def on_item_row_clicked(self, message: ItemRow.Clicked) -> None:
        self.move_to(message.row.index)
