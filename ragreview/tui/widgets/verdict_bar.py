"""Record-level verdicts (rejected, error detected, idk, answerability, rating) in one bar."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from ..model import Mark

SHORT = {
    "verdict": "verdict",
    "rejected": "rejected",
    "error_detected": "error",
    "idk": "idk",
    "underspecified": "underspec",
    "answerability": "answer",
    "rb_llm_rating": "rating",
}


def _value(value: object) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return "–" if value is None else str(value)


def _length(marks: list[Mark], hidden_judge: bool) -> int:
    return (
        sum(
            len(SHORT[m.name]) + len(_value(m.value)) + (len(_value(m.judge)) + 9) * m.disagrees + 4
            for m in marks
        )
        + 40 * hidden_judge
    )


class VerdictBar(Widget):
    """``rejected no · idk 0 · answerable ANSWERABLE``; overrides styled like row marks."""

    COMPONENT_CLASSES = {"verdict-bar--judge", "verdict-bar--human", "verdict-bar--override"}

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.marks: list[Mark] = []
        self.hidden_judge = False

    def show(self, marks: list[Mark], hidden_judge: bool) -> None:
        # Relayout only when the text's length changes (it may then wrap to another line).
        relayout = _length(marks, hidden_judge) != _length(self.marks, self.hidden_judge)
        self.marks = marks
        self.hidden_judge = hidden_judge
        self.set_class(not marks, "-empty")
        self.set_class(any(m.disagrees for m in marks), "-disagree")
        self.refresh(layout=relayout)

    def render(self) -> Text:
        parts = []
        for mark in self.marks:
            if mark.disagrees:
                style = self.get_component_rich_style("verdict-bar--override")
            elif mark.human:
                style = self.get_component_rich_style("verdict-bar--human")
            else:
                style = self.get_component_rich_style("verdict-bar--judge")
            part = Text(f"{SHORT[mark.name]} ")
            part.append(_value(mark.value), style)
            if mark.disagrees:
                part.append(f" (judge {_value(mark.judge)})")
            parts.append(part)
        if self.hidden_judge:
            parts.append(Text("[blind: judge hidden, b reveals]"))
        # A verdict is never split over two lines: break between verdicts only.
        width = max(1, self.content_region.width)
        text = Text()
        column = 0
        for i, part in enumerate(parts):
            if i and column + 3 + part.cell_len > width:
                text.append("\n")
                column = 0
            elif i:
                text.append(" · ")
                column += 3
            text.append_text(part)
            column += part.cell_len
        return text
