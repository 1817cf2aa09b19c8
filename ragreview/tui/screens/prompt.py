"""A one-line input in a modal: note, search, supporting keys."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class PromptScreen(ModalScreen[str | None]):
    """Dismisses with the text entered (enter) or None (escape)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt-cancel")]

    def __init__(self, title: str, value: str = "", hint: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt"):
            yield Static(Text(self.title_text), classes="prompt-title")
            yield Input(value=self.value, id="prompt-input")
            if self.hint:
                yield Static(Text(self.hint), classes="prompt-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
