"""The corrected estimates as a table for people (``metrics``, ``agreement``)."""

from __future__ import annotations

from typing import Any

from ..core.safe_text import printable
from ..services.estimates import draw_line, stop_line


def _fmt(value: Any) -> str:
    return "–" if value is None else f"{value:.4f}"


def print_estimates(block: dict[str, Any], console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = console or Console()
    table = Table(
        title="corrected estimate (judge on every record + reviewed draw, 95 % interval)",
        title_justify="left",
        caption=printable(draw_line(block), one_line=True),
        caption_justify="left",
    )
    for column in ("metric", "estimate", "95 % interval", "used", "more reviews"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for name, m in block["metrics"].items():
        ci = m["ci"]
        more = m["more_reviews"]
        table.add_row(
            Text(name),
            _fmt(m["estimate"]),
            "–" if ci is None else f"{ci[0]:.4f} – {ci[1]:.4f}",
            str(m["n_used"]),
            "" if more is None else str(more),
        )
    console.print(table)
    for line in [stop_line(block), *block.get("warnings", ())]:
        if line:
            console.print(Text(printable(line, one_line=True)))
