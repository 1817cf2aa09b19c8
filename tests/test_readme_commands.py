"""Every command of the CLI is in the README's command list (docs must match behaviour):
a command nobody can find is a command nobody uses."""

from __future__ import annotations

from pathlib import Path

from ragreview.cli import cli

README = Path(__file__).resolve().parents[1] / "README.md"


def test_every_command_appears_in_the_readme() -> None:
    text = README.read_text(encoding="utf-8")
    missing = [name for name in sorted(cli.commands) if f"ragreview {name}" not in text]
    assert missing == [], f"commands missing from README.md: {missing}"
    for group in (c for c in cli.commands.values() if hasattr(c, "commands")):
        for sub in group.commands:  # `runs use`, …; the implied `list` is `ragreview runs`
            if sub != "list":
                assert f"ragreview {group.name} {sub}" in text, f"{group.name} {sub}"
