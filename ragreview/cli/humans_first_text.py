"""Text tables of the agreement report's ``humans_first`` and ``by_rule`` blocks
(docs/align.md)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from ..core.safe_text import printable


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


def rules_table(block: dict[str, Any]) -> Table:
    table = Table(
        title=Text("Per guideline rule: judge vs reviewer on the items the rule decided"),
        title_justify="left",
    )
    for col in ("rule", "label", "n", "accuracy", "κ", "TPR", "TNR", "rule text"):
        table.add_column(col, justify="left" if col in ("rule", "label", "rule text") else "right")
    for rule, r in block.items():
        for name, s in r["labels"].items():
            table.add_row(
                Text(rule),
                Text(name),
                str(s["n"]),
                _num(s["accuracy"]),
                _num(s["kappa"]),
                _num(s["tpr"]),
                _num(s["tnr"]),
                Text(printable((r["text"] or "")[:60], one_line=True)),
            )
    return table
