"""``?``: every key with what it does, and what each label means."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...core.families import FAMILIES
from ...core.labels import CATALOGUE
from ..actions import ACTIONS, BY_ID

MARKS = (
    ("R U", "relevant / utilized document sentence (· = not)"),
    ("✓ ✗ ?", "supported / not supported / no label"),
    ("C · ?", "the sentence's whole context is useful / not / no verdict (ragas)"),
    ("← 0a 0b", "supporting document sentences of a response sentence"),
    ("E N C", "Entailment / Neutral / Contradiction of a claim or claim × chunk row (RAGChecker)"),
    ("≠", "your label differs from the judge's (reverse video); blind: only once reviewed"),
    ("▸ (verdicts)", "the verdict ⌫ reverts: the last verdict key you used"),
    ("▸ A B", "the human metric + and - step; annotators' values (InspectorRAGet)"),
    ("bold", "a label you set that agrees with the judge"),
    ("rule R3", "the guideline rule your label applies (T picks it, H shows the guidelines)"),
    ("✓ ! ·", "in the list: reviewed / stale / unreviewed; ✎ has a note"),
)


ITEM_EDITS = ("add-item", "delete-item", "edit-item", "split-item")


class HelpScreen(ModalScreen[None]):
    """Keys (the open record's label keys first), each family's keys, labels, marks."""

    BINDINGS = [
        Binding("escape,question_mark,q", "close", "Close", id="help-close"),
    ]

    def __init__(
        self,
        label_keys: frozenset[str] = frozenset(),
        family: str = "",
        editable: bool = True,
        families: tuple = (),
    ) -> None:
        super().__init__()
        self.label_keys = label_keys  # binding ids of the label keys that apply here
        self.family = family
        self.editable = editable  # the record has facts / statements the reviewer may edit
        self.families = families or FAMILIES  # the open record's (every family: none open)

    def compose(self) -> ComposeResult:
        title = f"Keys on this record ({self.family})" if self.family else "Keys"
        keys = Table(title=title, show_header=False, box=None, padding=(0, 1))
        for a in sorted(ACTIONS, key=lambda a: not (a.is_label and a.id in self.label_keys)):
            if a.is_label and a.id not in self.label_keys:
                continue
            if a.id in ITEM_EDITS and not self.editable:  # no facts or statements here
                continue
            keys.add_row(Text(a.shown, style="bold"), Text(a.palette_title), Text(a.help))
        keys.add_row(
            Text("^p", style="bold"), Text("app: Command palette"), Text("Every action by name.")
        )
        families = Table(title="Label keys by family", show_header=False, box=None, padding=(0, 1))
        for family in self.families:
            uses = "  ".join(f"{u.key} {BY_ID[u.action].title.lower()}" for u in family.keys)
            families.add_row(Text(family.title, style="bold"), Text(uses))
        labels = Table(title="Labels", show_header=False, box=None, padding=(0, 1))
        shown = {name for family in self.families for name in family.labels()}
        for spec in CATALOGUE.values():
            if spec.name not in shown:
                continue
            labels.add_row(Text(spec.name, style="bold"), Text(spec.target), Text(spec.meaning))
        marks = Table(title="Marks", show_header=False, box=None, padding=(0, 1))
        for mark, meaning in MARKS:
            marks.add_row(Text(mark, style="bold"), Text(meaning))
        with VerticalScroll(id="help"):
            yield Static(keys)
            yield Static(families)
            yield Static(labels)
            yield Static(marks)

    def action_close(self) -> None:
        self.dismiss(None)
