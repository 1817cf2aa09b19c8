"""One row of the record view: an item's key, label marks and text, and on a
RAGChecker claim its claim × chunk cells with a column cursor.

Record text is untrusted: the row is built from ``rich.text.Text`` objects, never
from markup strings.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.color import Color
from textual.dom import DOMNode
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget

from ...core.labels import ENTAILMENT
from ..items import Item
from ..model import Mark
from ..text import append, literal

BOOL_GLYPH = {True: "✓", False: "✗", None: "?"}
REASON_PREFIX = "judge ›"
CELL_META = "ragreview-cell"  # style meta of a claim × chunk cell's mark: its column
LETTERS = {"relevant": "R", "utilized": "U"}
ENTAILMENT_LABELS = frozenset(
    ("answer2response", "response2answer", "retrieved2response", "retrieved2answer")
)


ROW_PARTS = frozenset(
    {
        "item-row--key",
        "item-row--judge",
        "item-row--human",
        "item-row--override",
        "item-row--off",
        "item-row--keys",
        "item-row--cell",
    }
)


class RowStyles:
    """The Rich styles of the rows' parts (``ItemRow > .item-row--key`` …), resolved on
    first use and shared by every row with the same classes.

    Declared as Textual component classes they cost seven extra style applications per
    row each time a row was styled (mounted, cursor moved, label changed): most of the
    first screen's time with 44 rows (issue 27). A part's style depends only on the
    row's classes (its background) under one parent, so the parent keeps one of these
    and clears it when its own styles change (theme or CSS)."""

    def __init__(self) -> None:
        self._styles: dict[tuple[str, frozenset[str]], Style] = {}

    def clear(self) -> None:
        self._styles.clear()

    def get(self, row: Widget, part: str) -> Style:
        key = (part, frozenset(row.classes))
        style = self._styles.get(key)
        if style is None:
            style = self._styles[key] = _resolve(row, part)
        return style


def _resolve(row: Widget, part: str) -> Style:
    """What ``Widget.get_component_rich_style`` computes: a node with the part's class
    under the row, styled by the app's stylesheet, blended over the row's background."""
    assert part in ROW_PARTS, part
    node = DOMNode(classes=part)
    node._attach(row)
    row.app.stylesheet.apply(node, animate=False)
    styles = node.styles
    style = node.rich_style
    if styles.text_opacity < 1 and style.bgcolor is not None:
        blended = Color.from_rich_color(style.bgcolor) + styles.color.multiply_alpha(
            styles.text_opacity
        )
        style += Style.from_color(blended.rich_color)
    return style


class ItemRow(Widget):
    """One row: key, label marks, text. A RAGChecker claim's row also carries its
    claim × chunk cells as a strip of marks (``c0:E c1:N …``) with a column cursor:
    one widget per claim, not per cell (a 40 × 20 result would mount 1,600 rows).
    The parts' styles (``.item-row--key`` …) come from ``RowStyles``."""

    class Clicked(Message):
        def __init__(self, row: ItemRow, column: int | None = None) -> None:
            self.row = row
            self.column = column  # the claim × chunk cell clicked on, if any
            super().__init__()

    def __init__(
        self,
        index: int,
        item: Item,
        marks: list[Mark],
        reasons: list[tuple[str, str]],
        styles: RowStyles | None = None,
    ) -> None:
        super().__init__(classes=f"-{item.kind}")
        self.styles_of_parts = styles or RowStyles()  # shared by the list's rows
        self.index = index
        self.item = item
        self.marks = marks
        self.reasons = reasons  # the judge's (label, reason) shown under the text
        # a claim's cells (RAGChecker), their item indices, marks and reasons
        self.cells: list[Item] = []
        self.cell_indices: list[int] = []
        self.cell_marks: list[list[Mark]] = []
        self.cell_reasons: list[list[tuple[str, str]]] = []
        self.column: int | None = None  # the cell under the cursor; None: the claim
        # the height for a width, until what the row shows changes (see get_content_height)
        self._drawn = 0
        self._height: tuple[tuple[int, int], int] | None = None
        self._set_state_classes()

    def add_cell(
        self, index: int, item: Item, marks: list[Mark], reasons: list[tuple[str, str]]
    ) -> int:
        """Carry one more claim × chunk cell (before mounting); its column."""
        self.cells.append(item)
        self.cell_indices.append(index)
        self.cell_marks.append(marks)
        self.cell_reasons.append(reasons)
        self._drawn += 1
        self._set_state_classes()
        return len(self.cells) - 1

    def update_cell(self, column: int, marks: list[Mark], reasons: list[tuple[str, str]]) -> None:
        # only the cell under the cursor is spelled out (its reasons and rule take lines)
        relayout = column == self.column
        self.cell_marks[column] = marks
        self.cell_reasons[column] = reasons
        self._drawn += 1
        self._set_state_classes()
        self.refresh(layout=relayout)

    def set_column(self, column: int | None) -> None:
        """Put the column cursor on cell ``column`` (None: on the claim)."""
        if column != self.column:
            self.column = column
            self._drawn += 1
            self.refresh(layout=True)  # the cell's line under the strip comes or goes

    def update_marks(self, marks: list[Mark], reasons: list[tuple[str, str]]) -> None:
        relayout = (
            self.item.kind == "response"
            or reasons != self.reasons
            or [m.rule for m in marks] != [m.rule for m in self.marks]
        )
        self.marks = marks
        self.reasons = reasons
        self._drawn += 1
        self._set_state_classes()
        # Only supporting keys, reasons and rules change the row's height; skip relayout
        # otherwise.
        self.refresh(layout=relayout)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """Textual forgets a widget's measured height at every refresh, and refreshes each
        new widget once more after its first layout: every row of a record was rendered
        twice to be measured before the first screen (issue 27). The row's height
        changes only with what it shows (counted in ``_drawn``) and its width."""
        key = (width, self._drawn)
        if self._height is None or self._height[0] != key:
            self._height = (key, super().get_content_height(container, viewport, width))
        return self._height[1]

    def _set_state_classes(self) -> None:
        by_name = {m.name: m for m in self.marks}
        rel, util = by_name.get("relevant"), by_name.get("utilized")
        sup = by_name.get("supported") or by_name.get("statement") or by_name.get("attributed")
        state = {
            "-relevant": bool(rel and rel.value),
            "-utilized": bool(util and util.value),
            "-unsupported": bool(sup and sup.value is False),
            "-overridden": any(m.human for m in self._all_marks()),
            "-disagree": any(m.disagrees for m in self._all_marks()),
        }
        # One style update per change: restyling a row costs milliseconds, once per class.
        # A row not mounted yet is not restyled: mounting styles it (and a detached row
        # would be styled in full, without the cache its mounted siblings share).
        add = [c for c, on in state.items() if on and not self.has_class(c)]
        remove = [c for c, on in state.items() if not on and self.has_class(c)]
        attached = self.is_attached
        if remove:
            self.remove_class(*remove, update=attached and not add)
        if add:
            self.add_class(*add, update=attached)

    def _all_marks(self) -> list[Mark]:
        return self.marks + [m for marks in self.cell_marks for m in marks]

    def _part(self, part: str) -> Style:
        return self.styles_of_parts.get(self, part)

    def _mark_style(self, mark: Mark) -> Style:
        if mark.disagrees:
            return self._part("item-row--override")
        if mark.human:
            return self._part("item-row--human")
        if mark.value in (False, None):
            return self._part("item-row--off")
        return self._part("item-row--judge")

    def render(self) -> Hanging:
        # Wrapped sentence text hangs under itself, not under the marks.
        head = Text(no_wrap=True)
        # ≠ the reviewer overrode the judge here; ≈ two judge runs differ here
        runs = any(m.runs_disagree for m in self._all_marks())
        head.append("≠" if self.has_class("-disagree") else "≈" if runs else " ")
        head.append(f"{self.item.key:>3} ", self._part("item-row--key"))
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
        muted = self._part("item-row--keys")
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
        if self.cells:
            self._render_cells(body, muted)
        return Hanging(head, body)

    def _render_cells(self, body: Text, muted: Style) -> None:
        """The strip of cell marks, ``▸`` before the one under the cursor; below it, that
        cell's key, mark, chunk start and the judge's reason."""
        here = self._part("item-row--cell")
        body.append("\n")
        for c, (cell, marks) in enumerate(zip(self.cells, self.cell_marks, strict=True)):
            # (the cell's column rides on its style: a click on it reads it back)
            style = (self._mark_style(marks[0]) if marks else muted) + Style.from_meta(
                {CELL_META: c}
            )
            body.append("▸" if c == self.column else " ")
            glyphs = "".join(_glyph(m) for m in marks) or "?"
            append(
                body,
                f"{cell.key.rpartition('/')[2]}:{glyphs}",
                style + here if c == self.column else style,
            )
        if self.column is None:
            return
        cell, marks = self.cells[self.column], self.cell_marks[self.column]
        body.append("\n")
        append(body, f"{cell.key} ", self._part("item-row--key"))
        for mark in marks:
            body.append(_glyph(mark), self._mark_style(mark))
            body.append(" ")
        append(body, cell.text)
        for mark in marks:  # the guideline rule the reviewer's value applies (T)
            if mark.rule:
                append(body, f"  rule {mark.rule}", self._mark_style(mark))
        for name, why in self.cell_reasons[self.column]:
            body.append(f"\n{REASON_PREFIX} {name}: ", muted)
            append(body, why, muted)

    def on_click(self, event: events.Click) -> None:
        column = event.style.meta.get(CELL_META)
        self.post_message(self.Clicked(self, column if isinstance(column, int) else None))


class Hanging:
    """``head`` (one line) with ``body`` wrapped beside it, the body's later lines
    under itself: what a two-column ``Table.grid`` drew, without the table's column
    measuring, which rendered each row a dozen times over (issue 27: measuring a
    record's rows was most of its first layout)."""

    def __init__(self, head: Text, body: Text) -> None:
        self.head = head
        self.body = body

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        indent = self.head.cell_len
        room = max(1, options.max_width - indent)
        body = self.body
        lines = body.wrap(
            console,
            room,
            justify=body.justify or "left",  # (left pads each line to the room, as a cell)
            overflow=body.overflow or "fold",
            tab_size=body.tab_size or console.tab_size or 8,
            no_wrap=bool(body.no_wrap),
        )
        head = self.head.copy()
        head.truncate(indent, overflow="crop", pad=True)
        blank = Segment(" " * indent)
        for i, line in enumerate(lines):
            if i == 0:
                yield from head.render(console)
            else:
                yield blank
            yield from line.render(console)
            yield Segment.line()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        indent = self.head.cell_len
        body = Measurement.get(console, options, self.body)
        return Measurement(indent + body.minimum, indent + body.maximum)


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
