"""Judge → reviewed values and their delta, for the open record and the whole dataset."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.widgets import Static


def fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def delta(judge: float | None, reviewed: float | None) -> str:
    """Signed change; one label among 100,000 records moves a mean by ~1e-7, which must
    still read as a change, so small deltas are shown in scientific notation."""
    if judge is None or reviewed is None:
        return ""
    d = reviewed - judge
    if abs(d) < 1e-12:
        return ""
    return f"{d:+.3f}" if abs(d) >= 0.0005 else f"{d:+.0e}"


class MetricsPanel(Static):
    """Redrawn after every committed change; ``values`` keeps what is shown for tests."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        # section -> metric -> (judge, reviewed); judge None while blind
        self.values: dict[str, dict[str, tuple[float | None, float | None]]] = {}
        self._rows = -1

    def show(
        self,
        record: Mapping[str, Mapping[str, float | None]],
        dataset: Mapping[str, Any],
        hidden_judge: bool,
    ) -> None:
        self.values = {
            "record": _pairs(record, hidden_judge),
            "dataset": _pairs(dataset, False),
        }
        rec_rows, ds_rows = self.values["record"], self.values["dataset"]
        # The metrics that apply to this record, then its families' dataset-only rates
        # (e.g. rgb.accuracy), each with the dataset's value beside it.
        names = list(rec_rows) or [n for n in ds_rows if not n.endswith("_std")]
        families = {n.split(".", 1)[0] for n in names}
        names += [
            n
            for n in ds_rows
            if n not in rec_rows
            and n not in names
            and n.split(".", 1)[0] in families
            and not n.endswith("_std")  # spreads, not values a label moves
        ]
        # One family (the usual case): say it once in the heading and keep rows narrow.
        family = families.pop() if len(families) == 1 else None
        table = Table.grid(padding=(0, 1))
        table.add_column(no_wrap=True, overflow="ellipsis")
        for _ in range(4):
            table.add_column(justify="right", no_wrap=True)
        table.add_row(
            Text(family or "metric", style="bold"),
            Text("record", style="bold"),
            Text("Δ", style="dim"),
            Text("dataset", style="bold"),
            Text("Δ", style="dim"),
        )
        if not names:
            table.add_row(Text("no metrics", style="dim"), "", "", "", "")
        for name in names:
            cells = []
            for rows in (rec_rows, ds_rows):
                if name not in rows:  # a dataset-only rate: nothing per record
                    cells += [Text(""), Text("")]
                    continue
                judge, reviewed = rows[name]
                if rows is rec_rows and hidden_judge:
                    cells += [Text("blind", style="dim"), Text("")]
                    continue
                d = delta(judge, reviewed)
                cells += [Text(f"{fmt(judge)}→{fmt(reviewed)}"), Text(d, style="bold" if d else "")]
            label = name.split(".", 1)[1] if family and "." in name else name
            table.add_row(Text(label), *cells)
        # Relayout (which re-measures every sentence row beside the panel) only when the
        # panel's height can change; a label change normally only changes numbers.
        self.update(table, layout=len(names) != self._rows)
        self._rows = len(names)


def _pairs(
    values: Mapping[str, Any], hidden_judge: bool
) -> dict[str, tuple[float | None, float | None]]:
    judge = values.get("judge") or {}
    reviewed = values.get("effective") or {}
    names = sorted(set(judge) | set(reviewed))
    return {
        n: (None if hidden_judge else judge.get(n), reviewed.get(n))
        for n in names
        if "._" not in n  # components of dataset rates (e.g. rgb._rejection), not metrics
        and isinstance(judge.get(n), (int, float, type(None)))
        and isinstance(reviewed.get(n), (int, float, type(None)))
    }
