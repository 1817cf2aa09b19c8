"""The corrected estimates as a table for people (``metrics``, ``agreement``)."""

from __future__ import annotations

from typing import Any

from ..core.safe_text import printable


def _fmt(value: Any) -> str:
    return "–" if value is None else f"{value:.4f}"


def draw_line(block: dict[str, Any]) -> str:
    """One line on the draw the estimate comes from (or that there is none)."""
    d = block.get("draw")
    if d is None:
        return "no review draw yet: `ragreview queue` draws one; until then there is no estimate"
    line = (
        f"draw {d['id']} ({d['strategy']}, seed {d['seed']}): {d['used']} of {d['drawn']} "
        f"drawn records reviewed in order and used"
    )
    if block.get("reviewed_outside_draw"):
        line += f"; {block['reviewed_outside_draw']} reviewed outside the draw (not used)"
    return line


def stop_line(block: dict[str, Any]) -> str | None:
    target, more = block.get("target_halfwidth"), block.get("more_reviews")
    if target is None:
        return None
    if more is None:
        return f"target ±{target:g}: no estimate yet"
    return f"target ±{target:g}: {more} more reviews" if more else f"target ±{target:g}: reached"


def print_estimates(block: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
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
