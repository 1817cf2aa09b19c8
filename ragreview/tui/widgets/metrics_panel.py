"""Judge → reviewed values and their delta, for the open record and the whole dataset."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static


def fmt(value: float | None, count: bool = False) -> str:
    """Three decimals; a count (a record's number of facts, a length) as a whole number."""
    if value is None:
        return "–"
    if count and float(value).is_integer():
        return str(int(value))
    return f"{value:.3f}"


def pair(judge: float | None, reviewed: float | None, count: bool = False) -> str:
    if judge is None and reviewed is None:
        return "–"
    return f"{fmt(judge, count)}→{fmt(reviewed, count)}"


def delta(judge: float | None, reviewed: float | None) -> str:
    """Signed change; one label among 100,000 records moves a mean by ~1e-7, which must
    still read as a change, so small deltas are shown in scientific notation."""
    if judge is None or reviewed is None:
        return ""
    d = reviewed - judge
    if abs(d) < 1e-12:
        return ""
    return f"{d:+.3f}" if abs(d) >= 0.0005 else f"{d:+.0e}"


MIN_LINES = 10  # what fits beside the sentences at 80×24


class MetricsBox(VerticalScroll, can_focus=False):
    """The panel's scrolling frame. Its height is capped so the sentences keep most of
    the screen: 10 lines at 80×24, a third of a taller terminal, two thirds when
    expanded (``M``); ``{``/``}`` scroll it (a Static alone does not scroll)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.expanded = False
        self._screen_height = 24

    def compose(self) -> ComposeResult:
        yield MetricsPanel(id="metrics")

    def fit(self, screen_height: int | None = None) -> None:
        """Set the height cap for a terminal ``screen_height`` lines tall."""
        if screen_height is not None:
            self._screen_height = screen_height
        share = 2 if self.expanded else 1
        self.styles.max_height = max(MIN_LINES, self._screen_height * share // 3)

    def toggle_expanded(self) -> None:
        self.expanded = not self.expanded
        self.fit()

    def scroll_lines(self, lines: int) -> None:
        self.scroll_relative(y=lines, animate=False)


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
        prefixes: tuple[str, ...] = (),
        counts: frozenset[str] = frozenset(),
        single: frozenset[str] = frozenset(),
        estimates: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """``prefixes``: the open record's families' metrics (others are not shown);
        while the judge is hidden, the dataset's judge values and deltas are too.
        ``single``: metrics no label moves (a file's automatic scores), shown as one value.
        ``estimates``: the corrected estimates from the review draw (docs/estimate.md),
        shown under the table (not while the judge is hidden: they use its values)."""
        self.values = {
            "record": _pairs(record, hidden_judge, prefixes),
            "dataset": _pairs(dataset, hidden_judge, prefixes),
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
        names.sort(key=lambda n: n in single)  # what a label moves first
        # One family (the usual case): say it once in the heading and keep rows narrow.
        family = families.pop() if len(families) == 1 else None
        table = Table.grid(padding=(0, 1))
        # Numbers are never cut: their columns are as wide as their widest cell and
        # only the name column gives way (it folds onto a second line).
        table.add_column(overflow="fold")
        body: list[list[Text]] = []
        if not names:
            body.append([Text("no metrics", style="dim"), Text(""), Text(""), Text(""), Text("")])
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
                count = name in counts
                if hidden_judge or name in single:  # the reviewed value only
                    cells += [Text(fmt(reviewed, count)), Text("")]
                    continue
                d = delta(judge, reviewed)
                cells += [Text(pair(judge, reviewed, count)), Text(d, style="bold" if d else "")]
            label = name.split(".", 1)[1] if family and "." in name else name
            body.append([Text(label), *cells])
        # the corrected estimates of the review draw, as rows of their own under the table
        self.values["estimate"] = {}
        extra: list[list[Text]] = []
        for name in names if estimates is not None and not hidden_judge else ():
            if name not in estimates:
                continue
            est = estimates[name]
            self.values["estimate"][name] = (est["estimate"], est["halfwidth"])
            half = "" if est["halfwidth"] is None else f"±{est['halfwidth']:.3f}"
            label = name.split(".", 1)[1] if family and "." in name else name
            extra.append([Text(label), Text(fmt(est["estimate"])), Text(half),
                          Text(f"n={est['n_used']}"), Text("")])  # fmt: skip
        if extra:
            extra.insert(0, [Text("estimate", style="bold"), Text("95 %", style="dim"),
                             Text(""), Text(""), Text("")])  # fmt: skip
        head = [Text(family or "metric", style="bold"), Text("record", style="bold"),
                Text("Δ", style="dim"), Text("dataset", style="bold"), Text("Δ", style="dim")]  # fmt: skip
        for column in range(1, 5):
            width = max(c[column].cell_len for c in [head, *body, *extra])
            table.add_column(justify="right", no_wrap=True, min_width=width, width=width)
        table.add_row(*head)
        for cells in [*body, *extra]:
            table.add_row(*cells)
        # Relayout (which re-measures every sentence row beside the panel) only when the
        # panel's height can change; a label change normally only changes numbers.
        self.update(table, layout=len(names) + len(extra) != self._rows)
        self._rows = len(names) + len(extra)


def _pairs(
    values: Mapping[str, Any], hidden_judge: bool, prefixes: tuple[str, ...] = ()
) -> dict[str, tuple[float | None, float | None]]:
    judge = values.get("judge") or {}
    reviewed = values.get("effective") or {}
    names = sorted(set(judge) | set(reviewed))
    return {
        n: (None if hidden_judge else judge.get(n), reviewed.get(n))
        for n in names
        if "._" not in n  # components of dataset rates (e.g. rgb._rejection), not metrics
        and (not prefixes or n.startswith(prefixes))
        and isinstance(judge.get(n), (int, float, type(None)))
        and isinstance(reviewed.get(n), (int, float, type(None)))
    }
