"""The review TUI (Textual). Nothing outside ``ragreview.tui`` and the CLI imports it."""
