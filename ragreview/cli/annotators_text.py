"""The ``annotators`` block of the agreement report as Rich tables (human metrics that
a file declares, with several annotators each: docs/agreement.md)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .audit_text import num


def print_annotators(block: dict[str, Any], console: Console) -> None:
    table = Table(title="Annotators of the file's human metrics", title_justify="left")
    for column in ("metric", "annotators", "paired records", "α nominal", "α ordinal", "κ_w"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for name, stats in block.items():
        table.add_row(
            Text(name),
            num(stats["annotators"]),
            num(stats["paired_records"]),
            num(stats["alpha_nominal"]),
            num(stats["alpha_ordinal"]),
            num(stats["weighted_kappa"]),
        )
    console.print(table)
    autos = list(dict.fromkeys(a for stats in block.values() for a in stats["correlations"]))
    if not autos:
        return
    corr = Table(
        title="Automatic metrics vs the annotators' aggregate (Spearman ρ / Kendall τ-b)",
        title_justify="left",
    )
    corr.add_column("automatic metric")
    for name, stats in block.items():
        corr.add_column(Text(f"{name} ({stats['aggregator']})"), justify="right")
    for auto in autos:
        cells = []
        for stats in block.values():
            got = stats["correlations"].get(auto)
            cells.append("–" if got is None else f"{num(got['spearman'])} / {num(got['kendall'])}")
        corr.add_row(Text(auto), *cells)
    console.print(corr)
