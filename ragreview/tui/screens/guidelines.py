"""The dataset's guidelines (``H``) and the rule picker (``T``): docs/align.md.

The guidelines are a file someone attached (``ragreview guidelines``): untrusted text,
shown literally (never as Markdown or Rich markup, no escape sequences) through
``tui.text``.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..text import append, literal, one_line

FIRST_LINE = 72  # characters of a rule's text in the picker


def rule_ids(rules: dict[str, str]) -> Text:
    """``rules: R1, R2, R10`` (ids from the file: literal)."""
    return append(
        Text("rules: ", "bold"), ", ".join(rules) or "none (no line starts with R1, R2, …)"
    )


class GuidelinesScreen(ModalScreen[None]):
    """The guidelines' Markdown as written, under the ids of the rules found in it."""

    BINDINGS = [Binding("escape,q,H,shift+h", "close", "Close", id="guidelines-close")]

    def __init__(self, dataset: str, text: str, rules: dict[str, str]) -> None:
        super().__init__()
        self.dataset = dataset
        self.text = text
        self.rules = rules

    def compose(self) -> ComposeResult:
        title = append(Text("Guidelines of ", "bold"), one_line(self.dataset), "bold")
        title.append("  (esc or H closes; T tags your label with a rule)", "dim")
        with VerticalScroll(id="guidelines"):
            yield Static(title)
            yield Static(rule_ids(self.rules), id="guidelines-rules")
            yield Static(literal(self.text), id="guidelines-text")

    def action_close(self) -> None:
        self.dismiss(None)


def rule_option(rule_id: str, text: str, current: str | None) -> Option:
    """``R3  a hedge counts as…``: the id, then the start of its text on one line."""
    prompt = Text(no_wrap=True, overflow="ellipsis")
    append(prompt, f"{'▸' if rule_id == current else ' '}{rule_id:<4} ", "bold")
    body = one_line(text)
    append(prompt, body if len(body) <= FIRST_LINE else body[: FIRST_LINE - 1] + "…")
    return Option(prompt, id=rule_id)


class RulePicker(ModalScreen[str | None]):
    """Dismisses with the rule id chosen (enter, or a click) or None (escape)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="rule-picker-cancel")]

    def __init__(self, title: str, rules: dict[str, str], current: str | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.rules = rules
        self.current = current

    def compose(self) -> ComposeResult:
        options = [rule_option(r, text, self.current) for r, text in self.rules.items()]
        with Vertical(id="rule-picker"):
            yield Static(literal(self.title_text), classes="prompt-title")
            yield OptionList(*options, id="rule-options")
            yield Static(
                Text("enter tags your label with the rule, esc cancels"), classes="prompt-hint"
            )

    def on_mount(self) -> None:
        picker = self.query_one(OptionList)
        if self.current in self.rules:
            picker.highlighted = list(self.rules).index(self.current)
        picker.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
