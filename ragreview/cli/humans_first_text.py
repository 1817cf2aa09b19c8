"""The text table of the agreement report's ``humans_first`` block (docs/align.md)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def humans_first_table(block: dict[str, Any]) -> Table:
    names = ", ".join(block["reviewers"])
    table = Table(
        title=Text(f"Humans first: reviewers vs each other ({names}; {block['records']} records)"),
        title_justify="left",
    )
    for col in ("label", "items", "humans", "95% CI", "judge κ vs humans", ""):
        table.add_column(col, justify="left" if col in ("label", "") else "right")
    for name, s in block["labels"].items():
        shown = "κ" if s["statistic"] == "kappa" else "α"
        ci = "–" if s["ci_low"] is None else f"[{s['ci_low']:.3f}, {s['ci_high']:.3f}]"
        table.add_row(
            Text(name),
            str(s["items"]),
            f"{shown} {_num(s['value'])}",
            ci,
            _num(s["judge_kappa"]),
            "humans agree less than the judge" if s["humans_below_judge"] else "",
        )
    return table
