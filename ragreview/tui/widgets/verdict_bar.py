"""Record-level verdicts (rejected, error detected, idk, answerability, rating) in one bar."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from ..model import Mark

SHORT = {
    "rejected": "rejected",
    "error_detected": "error",
    "idk": "idk",
    "underspecified": "underspecified",
    "answerability": "answerable",
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
        text = Text()
        for i, mark in enumerate(self.marks):
            if i:
                text.append(" · ")
            if mark.disagrees:
                style = self.get_component_rich_style("verdict-bar--override")
            elif mark.human:
                style = self.get_component_rich_style("verdict-bar--human")
            else:
                style = self.get_component_rich_style("verdict-bar--judge")
            text.append(f"{SHORT[mark.name]} ")
            text.append(_value(mark.value), style)
            if mark.disagrees:
                text.append(f" (judge {_value(mark.judge)})")
        if self.hidden_judge:
            text.append("  [blind: judge hidden, b reveals]")
        return text
