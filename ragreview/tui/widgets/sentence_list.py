"""The record's keyed items (document and response sentences, facts, statements, parts)
as rows with their label marks, and the cursor that one-key labels act on.

Record text is untrusted: every row is built from ``rich.text.Text`` objects, never
from markup strings, so ``[bold red]`` in a document shows exactly those characters.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from ...core.record import Turn
from ..items import CELL_OF, Item
from ..model import Review
from ..text import append, literal
from .item_row import REASON_PREFIX, ItemRow, RowStyles

__all__ = ["ItemRow", "SentenceList"]


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
        self.items: list[Item] = []  # the review's items as drawn; ``cursor`` indexes them
        # per item: the row it is drawn on and its cell column there (None: the row's own)
        self._place: list[tuple[ItemRow, int | None]] = []
        self.cursor = 0
        self.show_reasons = True
        self.unfold_turns = False  # earlier conversation turns: one line each until `o`
        self.turns: list[TurnRow] = []
        self.row_styles = RowStyles()  # the rows' part styles, shared by all rows
        # the open record's widgets below its first screenful, mounted after the first
        # frame (``show``)
        self._rest: list[Widget] = []

    def notify_style_update(self) -> None:
        # the theme or CSS changed (every node is restyled, this list before its rows)
        super().notify_style_update()
        self.row_styles.clear()

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
        self._place = []
        self.items = list(review.items)
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
        self.cursor = min(cursor, max(0, len(self.items) - 1))
        if self.rows:
            row, column = self._place[self.cursor]
            row.add_class("-cursor", update=False)  # (styled when mounted)
            row.column = column
        self.remove_children()
        # A RAGBench record has ~44 rows and ~15 fit on the screen: each mounted row is
        # styled and measured before the frame is drawn, so the rows below the first
        # screenful are mounted after it (issue 27). Every row exists from here on, so
        # the cursor, marks and keys work on all of them; a key that moves or scrolls
        # mounts the rest first (``_mount_rest``).
        shown = self._first_screenful(widgets)
        self._rest = widgets[shown:]
        self.mount_all(widgets[:shown])
        self.scroll_home(animate=False)
        # a cursor on an item no key labels (an MT-RAG response) need not be revealed
        self.reveal = bool(self.rows) and review.labelled(self.items[self.cursor])
        self.call_after_refresh(self._reveal_cursor_from_top)
        if self._rest:
            self.call_after_refresh(self._mount_rest)

    def _first_screenful(self, widgets: list[Widget]) -> int:
        """How many of ``widgets`` can show before the first scroll: those up to the
        cursor's row and a screen's height of lines below it. Heights are counted low
        (a shown widget takes a line, a row its text's width over the list's, each
        line of which wraps to at least that) and, before the first layout, the screen's
        size stands for the list's: more rows are mounted first than fit, never fewer."""
        width = max(1, self.size.width or self.app.size.width)
        height = self.size.height or self.app.size.height
        start = widgets.index(self._place[self.cursor][0]) if self.rows else 0
        lines = 0
        for i in range(start, len(widgets)):
            widget = widgets[i]
            if isinstance(widget, ItemRow):
                lines += -(-cell_len(widget.item.text) // width) or 1
            elif widget.display:
                lines += 1
            if lines > height:
                return i + 1
        return len(widgets)

    def _mount_rest(self) -> bool:
        """Mount the rows held back at opening (after the first frame, or before a key
        moves the cursor or scrolls); False if there were none."""
        rest, self._rest = self._rest, []
        if rest:
            self.mount_all(rest)
        return bool(rest)

    def _item_widgets(self, review: Review, start: int, stop: int) -> list[Widget]:
        """Rows of items ``start``..``stop`` under their section headings."""
        widgets: list[Widget] = []
        for i in range(start, stop):
            item = review.items[i]
            claim = self.rows[-1] if self.rows else None
            if claim is not None and CELL_OF.get(item.kind) == claim.item.kind:
                # a claim × chunk cell: a mark on its claim's row, not a row of its own
                marks, reasons = review.marks(item), self._reasons(review, item)
                self._place.append((claim, claim.add_cell(i, item, marks, reasons)))
                continue
            if item.section != self._section:
                self._section = item.section
                widgets.append(Static(literal(item.section), classes="heading"))
                if item.kind not in self._placed and review.item_labels.get(item.kind):
                    self._placed.add(item.kind)
                    block = Static(classes="section-reason")
                    self._section_reasons.append((block, item.kind))
                    widgets.append(block)
            row = ItemRow(i, item, review.marks(item), self._reasons(review, item), self.row_styles)
            self.rows.append(row)
            self._place.append((row, None))
            widgets.append(row)
        return widgets

    def _fill_turn(self, line: TurnRow) -> None:
        """An earlier turn: one line cut with … while folded, all of it unfolded."""
        turn = line.turn
        folded = not self.unfold_turns
        text = " ".join(turn.text.split()) if folded else turn.text
        # one line, cut with … (app.tcss); a row not yet mounted is styled when it is
        line.set_class(folded, "-folded", update=line.is_attached)
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
        return self.items[self.cursor] if self.items else None

    @property
    def row(self) -> ItemRow | None:
        """The row the cursor is on (a cell's cursor is on its claim's row)."""
        return self._place[self.cursor][0] if self.items else None

    def move_to(self, index: int, *, scroll: bool = True) -> None:
        """Cursor on item ``index`` (an index of ``items``: a cell is a column of its row)."""
        if not self.items:
            return
        index = max(0, min(index, len(self.items) - 1))
        flushed = self._mount_rest()  # a key before the rows below the first screen came
        old = self._place[self.cursor][0]
        row, column = self._place[index]
        if old is not row:
            old.remove_class("-cursor")
            old.set_column(None)
            row.add_class("-cursor")
        row.set_column(column)
        self.cursor = index
        # a move made before the opening's reveal ran (a quick key, or a key that opens a
        # record and moves to an item in it) must not be scrolled away by that reveal
        self.reveal = False
        if scroll and (flushed or not row.size.height):
            # once the rows are laid out (a row mounted after the first frame may not be yet)
            self.call_after_refresh(self._scroll_to_cursor)
        elif scroll:
            self._scroll_to_cursor()

    def step(self, delta: int) -> None:
        """``j``/``k``: next or previous row, on a claim × chunk grid in the same column;
        before the first row, the record's top."""
        if not self.items:
            return
        row, column = self._place[self.cursor]
        at = self.rows.index(row)
        if delta < 0 and at == 0:
            self.scroll_home(animate=False)
            return
        target = self.rows[max(0, min(at + delta, len(self.rows) - 1))]
        if column is not None and target.cells:
            self.move_to(target.cell_indices[min(column, len(target.cells) - 1)])
        else:
            self.move_to(target.index)
        if target is self.rows[0]:
            self.scroll_home(animate=False)  # nothing above the first item stays hidden

    def step_cell(self, delta: int) -> bool:
        """``←``/``→``: the previous / next cell of the claim's row (left of the first
        cell: the claim). False where the row has no cells."""
        row, column = self._place[self.cursor] if self.items else (None, None)
        if row is None or not row.cells:
            return False
        at = max(-1, min((-1 if column is None else column) + delta, len(row.cells) - 1))
        self.move_to(row.index if at < 0 else row.cell_indices[at])
        return True

    def edge(self, end: bool) -> None:
        """Home / End: the top (id, question, conversation) or bottom of the record."""
        self._mount_rest()  # (both scrolls below wait for the next refresh)
        if self.items:
            self.move_to(len(self.items) - 1 if end else 0, scroll=False)
        if end:
            self.scroll_end(animate=False)
        else:
            self.scroll_home(animate=False)

    def page(self, pages: int) -> None:
        """Scroll a page; the cursor follows to the first item in view."""
        if self._mount_rest():  # a key before the rows below the first screen came
            self.call_after_refresh(self.page, pages)
            return
        height = max(1, self.scrollable_content_region.height - 1)
        target = max(0, min(self.max_scroll_y, self.scroll_y + pages * height))
        self.scroll_to(y=target, animate=False)
        for row in self.rows:
            if row.virtual_region.y >= target:
                self.move_to(row.index, scroll=False)
                return
        if self.items:
            self.move_to(len(self.items) - 1, scroll=False)

    def _scroll_to_cursor(self) -> None:
        if self.row is not None:
            self.scroll_to_widget(self.row, animate=False)

    def _reveal_cursor_from_top(self) -> None:
        """On opening: keep the top in view if the cursor fits below it; else scroll so
        a whole widget (never half a question) starts the view."""
        if self.row is None or not self.reveal:
            return
        row = self.row.virtual_region
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
        """Redraw one item's marks (or all) from the review's committed labels."""
        if index is not None:
            row, column = self._place[index]
            item = self.items[index]
            if column is not None:
                row.update_cell(column, review.marks(item), self._reasons(review, item))
            else:
                row.update_marks(review.marks(item), self._reasons(review, item))
            return
        for row in self.rows:
            for c, cell in enumerate(row.cells):
                row.update_cell(c, review.marks(cell), self._reasons(review, cell))
            row.update_marks(review.marks(row.item), self._reasons(review, row.item))

    def on_item_row_clicked(self, message: ItemRow.Clicked) -> None:
        row, column = message.row, message.column
        self.move_to(row.index if column is None else row.cell_indices[column])


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
