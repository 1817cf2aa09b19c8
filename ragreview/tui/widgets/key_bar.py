"""The bottom two lines: the last message (instead of toasts that would cover the
metrics panel) and the keys that apply to the open record, from its family."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ..text import append


class StatusLine(Static):
    """One line: the latest message, kept until the next key (the screen clears it
    before that key's action runs, so the action's own message is what stays)."""

    SEVERITY = {"error": "bold red", "warning": "yellow", "information": ""}

    def say(self, message: str, severity: str = "information") -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        append(text, " ".join(message.split()), self.SEVERITY.get(severity, ""))
        # always one line (app.tcss): a relayout here re-measured the whole screen on
        # every key, twice (cleared, then the key's message)
        self.update(text, layout=False)

    def clear(self) -> None:
        self.update("", layout=False)


class KeyBar(Static):
    """``r relevant  u utilized  s supported  l keys │ ␣ done  b blind  ? help``."""

    def show(self, label_keys: list[tuple[str, str]], common: list[tuple[str, str]]) -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        for i, (key, word) in enumerate(label_keys + common):
            if i and i == len(label_keys):
                text.append(" │ ", "dim")
            elif i:
                text.append("  ")
            text.append(key, "bold")
            text.append(f" {word}")
        self.update(text, layout=False)  # always one line (app.tcss)
