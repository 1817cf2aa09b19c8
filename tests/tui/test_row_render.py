"""A row draws its key and marks, then its text wrapped beside them and hanging under
itself: ``Hanging`` must draw exactly what the two-column ``Table.grid`` it replaced
drew (issue 27: the table's measuring rendered every row a dozen times per layout)."""

from __future__ import annotations

import random

from rich.console import Console
from rich.style import Style
from rich.table import Table
from rich.text import Text

from ragreview.tui.widgets.item_row import Hanging

WORDS = [
    "a",
    "sentence",
    "with",
    "words",
    "[bold]x[/]",
    "漢字テキスト",
    "é",
    "\t",
    "—",
    "0123456789" * 4,
]


def grid(head: Text, body: Text) -> Table:
    """The row's former renderable."""
    table = Table.grid(expand=True)
    table.add_column(no_wrap=True, width=head.cell_len)
    table.add_column(ratio=1, overflow="fold")
    table.add_row(head, body)
    return table


def drawn(renderable, width: int) -> list[list[tuple[str, Style | None]]]:
    console = Console(width=width, color_system="truecolor", legacy_windows=False)
    lines = console.render_lines(renderable, console.options, pad=True)
    # the cells' text and style, whatever the segments' boundaries
    return [[(ch, seg.style or Style()) for seg in line for ch in seg.text] for line in lines]


def test_hanging_draws_what_the_grid_drew() -> None:
    rng = random.Random(27)
    muted, mark = Style(color="grey50"), Style(bold=True, color="green")
    for _ in range(300):
        head = Text(no_wrap=True)
        head.append(rng.choice("≠≈ "))
        head.append(f"{rng.choice(['0a', '12b', 'c3/7', 'f1']):>3} ", muted)
        for _ in range(rng.randint(0, 4)):
            head.append(rng.choice("✓✗?RU·"), mark)
            head.append(" ")
        body = Text(" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 40))))
        if rng.random() < 0.5:
            body.append("\njudge › relevant: ", muted)
            body.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 20))), muted)
        width = rng.randint(head.cell_len + 1, 120)
        assert drawn(Hanging(head, body), width) == drawn(grid(head, body), width), (
            head.plain,
            body.plain,
            width,
        )
