"""``?``: every key with what it does, and what each label means."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...core.labels import CATALOGUE
from ..actions import ACTIONS

MARKS = (
    ("R U", "relevant / utilized document sentence (· = not)"),
    ("✓ ✗ ?", "supported / not supported / no label"),
    ("← 0a 0b", "supporting document sentences of a response sentence"),
    ("≠", "your label differs from the judge's (reverse video)"),
    ("bold", "a label you set that agrees with the judge"),
    ("✓ ! ·", "in the list: reviewed / stale / unreviewed; ✎ has a note"),
)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark,q", "close", "Close", id="help-close"),
    ]

    def compose(self) -> ComposeResult:
        keys = Table(title="Keys", show_header=False, box=None, padding=(0, 1))
        for a in ACTIONS:
            keys.add_row(Text(a.display, style="bold"), Text(a.palette_title), Text(a.help))
        keys.add_row(
            Text("^p", style="bold"), Text("app: Command palette"), Text("Every action by name.")
        )
        labels = Table(title="Labels", show_header=False, box=None, padding=(0, 1))
        for spec in CATALOGUE.values():
            labels.add_row(Text(spec.name, style="bold"), Text(spec.target), Text(spec.meaning))
        marks = Table(title="Marks", show_header=False, box=None, padding=(0, 1))
        for mark, meaning in MARKS:
            marks.add_row(Text(mark, style="bold"), Text(meaning))
        with VerticalScroll(id="help"):
            yield Static(keys)
            yield Static(labels)
            yield Static(marks)

    def action_close(self) -> None:
        self.dismiss(None)
