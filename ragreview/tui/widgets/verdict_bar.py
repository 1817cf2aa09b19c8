"""Record-level verdicts (rejected, error detected, idk, answerability, rating) in one bar."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from ..model import Mark
from ..rubric import RubricLine, show_value
from ..text import append

SHORT = {
    "verdict": "verdict",
    "rejected": "rejected",
    "error_detected": "error",
    "not_addressed": "not addressed",  # reject_evalue.py's LLM verdict
    "identified": "identified",  # fact_evalue.py's LLM verdict
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
            len(SHORT[m.name])
            + len(_value(m.value))
            + (len(_value(m.judge)) + 9) * m.disagrees
            + 4
            + (len(m.rule) + 6 if m.rule else 0)
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
        # a record's declared human metrics (InspectorRAGet): one line each
        self.rubric: list[RubricLine] = []
        self.annotators: list[tuple[str, str]] = []  # (letter, annotator id)
        self.active: str | None = None  # the verdict ⌫ reverts

    def show(
        self,
        marks: list[Mark],
        hidden_judge: bool,
        rubric: list[RubricLine] | None = None,
        annotators: list[tuple[str, str]] | None = None,
        active: str | None = None,
    ) -> None:
        """``active``: the verdict ``⌫`` reverts (marked ▸)."""
        rubric, annotators = rubric or [], annotators or []
        relayout_active = active != self.active
        self.active = active
        # Relayout only when the text's length changes (it may then wrap to another line).
        relayout = _length(marks, hidden_judge) != _length(
            self.marks, self.hidden_judge
        ) or _rubric_length(rubric, annotators) != _rubric_length(self.rubric, self.annotators)
        self.marks = marks
        self.hidden_judge = hidden_judge
        self.rubric, self.annotators = rubric, annotators
        self.set_class(not marks and not rubric, "-empty")
        self.set_class(any(m.disagrees for m in marks), "-disagree")
        self.refresh(layout=relayout or relayout_active)

    def render(self) -> Text:
        parts = []
        for mark in self.marks:
            if mark.disagrees:
                style = self.get_component_rich_style("verdict-bar--override")
            elif mark.human:
                style = self.get_component_rich_style("verdict-bar--human")
            else:
                style = self.get_component_rich_style("verdict-bar--judge")
            part = Text("▸" if mark.name == self.active else "")
            part.append(f"{SHORT[mark.name]} ")
            part.append(_value(mark.value), style)
            if mark.disagrees:
                part.append(f" (judge {_value(mark.judge)})")
            if mark.rule:  # the guideline rule the reviewer's value applies (T)
                append(part, f" rule {mark.rule}")
            parts.append(part)
        if self.hidden_judge:
            parts.append(Text("[blind: judge hidden, b reveals]"))
        width = max(1, self.content_region.width)
        lines = [_flow(parts, width, indent=0)] if parts else []
        if self.annotators:
            legend = [Text("annotators")] + [
                append(Text(f"{letter} "), who) for letter, who in self.annotators
            ]
            lines.append(_flow(legend, width))
        for line in self.rubric:
            lines.append(_flow(self._rubric_parts(line), width))
            meaning = self._meaning(line, width)
            if meaning is not None:
                lines.append(meaning)
        text = Text()
        for n, row in enumerate(lines):
            if n:
                text.append("\n")
            text.append_text(row)
        return text

    def _rubric_parts(self, line: RubricLine) -> list[Text]:
        """``▸faithfulness 3 · A 3 · B 2 · of 1 2 3 4``: the reviewer's value, each
        annotator's, and on the active metric the declared scale."""
        style = self.get_component_rich_style(
            "verdict-bar--human" if line.human else "verdict-bar--judge"
        )
        # metric names and values come from the file: literal text
        head = Text("▸" if line.active else " ", "bold")
        append(head, f"{line.name} ", "bold" if line.active else "")
        append(head, line.shown or show_value(line.value), style)
        parts = [head] + [append(Text(f"{letter} "), value) for letter, value in line.annotators]
        if line.active and line.scale:
            parts.append(append(Text("of ", "dim"), line.scale, "dim"))
        return parts

    def _meaning(self, line: RubricLine, width: int) -> Text | None:
        """The active metric's description from the file, dim, under its line."""
        if not (line.active and line.meaning):
            return None
        text = append(Text("  "), line.meaning, "dim italic")
        text.truncate(width, overflow="ellipsis")
        return text


def _flow(parts: list[Text], width: int, indent: int = 1) -> Text:
    """Parts joined by `` · ``; a part is never split over two lines (a wrapped line
    starts ``indent`` cells in)."""
    text = Text()
    column = 0
    for i, part in enumerate(parts):
        if i and column + 3 + part.cell_len > width:
            text.append("\n" + " " * indent)
            column = indent
        elif i:
            text.append(" · ")
            column += 3
        text.append_text(part)
        column += part.cell_len
    return text


def _rubric_length(lines: list[RubricLine], annotators: list[tuple[str, str]]) -> int:
    return sum(len(str(line)) for line in lines) + sum(len(w) + 3 for _, w in annotators)
