"""Text output of ``agreement --runs``'s paired comparison and self-agreement."""

from __future__ import annotations

from typing import Any

import click

from ..core.safe_text import printable


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def _delta(value: Any) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _ci(low: Any, high: Any) -> str:
    return "–" if low is None or high is None else f"[{low:+.3f}, {high:+.3f}]"


def print_self_agreement(console: Any, blocks: list[dict[str, Any]]) -> None:
    from rich.table import Table
    from rich.text import Text

    for block in blocks:
        head = (
            f"judge vs itself: run {block['run']} and its repeat {block['repeat']} "
            f"on {block['records']} records"
        )
        click.echo(printable(head, one_line=True))
        table = Table()
        table.add_column("label", no_wrap=True)
        for column in ("n", "self κ [95% CI]", "κ vs human"):
            table.add_column(column, justify="right", no_wrap=True)
        for name, stats in block["labels"].items():
            low, high = stats["ci_low"], stats["ci_high"]
            ci = "–" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"
            table.add_row(
                Text(name),
                str(stats["n"]),
                f"{_num(stats['kappa'])} {ci}",
                _num(stats["kappa_vs_human"]),
            )
        console.print(table)


def print_paired(console: Any, block: dict[str, Any] | None) -> None:
    from rich.table import Table
    from rich.text import Text

    if block is None:
        click.echo("paired comparison: needs two judge runs (besides repeats)")
        return
    head = (
        f"paired: candidate {block['candidate']} − base {block['base']} "
        f"on {block['records']} reviewed records both judged"
    )
    click.echo(printable(head, one_line=True))
    table = Table()
    table.add_column("label / metric", no_wrap=True)
    for column in ("stat", "base", "candidate", "Δ", "95% CI of Δ", "verdict"):
        table.add_column(column, justify="right", no_wrap=True)
    for name, stats in block["labels"].items():
        for stat, shown in (("kappa", "κ"), ("tpr", "TPR"), ("tnr", "TNR")):
            s = stats[stat]
            table.add_row(
                Text(name),
                shown,
                _num(s["base"]),
                _num(s["candidate"]),
                _delta(s["delta"]),
                _ci(s["ci_low"], s["ci_high"]),
                s["verdict"],
            )
    for name, m in block["metrics"].items():
        table.add_row(
            Text(name),
            "|bias|",
            _num(m["base_bias"]),
            _num(m["candidate_bias"]),
            _delta(m["delta_abs_bias"]),
            _ci(m["ci_low"], m["ci_high"]),
            m["verdict"],
        )
    console.print(table)
