"""Judge → reviewed values and their delta, for the open record and the whole dataset."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static


def fmt(value: float | None, count: bool = False) -> str:
    """Three decimals; a count (a record's number of facts, a length) as a whole number."""
    if value is None:
        return "–"
    if count and float(value).is_integer():
        return str(int(value))
    return f"{value:.3f}"


def fixed(value: float, sign: bool = False) -> str:
    """Fixed-point, never scientific: three decimals, or as many as the first significant
    digit of a smaller number needs (one label among 100,000 records moves a mean by
    ~1e-7, which must still read as a change)."""
    places = 3
    while abs(value) < 10**-places and places < 12:
        places += 1
    return f"{value:+.{places}f}" if sign else f"{value:.{places}f}"


def pair(judge: float | None, reviewed: float | None, count: bool = False) -> str:
    if judge is None and reviewed is None:
        return "–"
    return f"{fmt(judge, count)}→{fmt(reviewed, count)}"


def delta(judge: float | None, reviewed: float | None, count: bool = False) -> str:
    """Signed change in the panel's one fixed style (``fixed``); a count's as a whole
    number (``+1``)."""
    if judge is None or reviewed is None:
        return ""
    d = reviewed - judge
    if abs(d) < 1e-12:
        return ""
    if count and float(d).is_integer():
        return f"{int(d):+d}"
    return fixed(d, sign=True)


def fold_name(name: str, width: int) -> str:
    """A metric name over several lines, cut only after ``_``, ``-`` or ``.`` (never
    mid-word); a part longer than ``width`` stays whole (the column then cuts it with …)."""
    if width < 1 or len(name) <= width:
        return name
    parts = re.findall(r"[^_.\-]*[_.\-]?", name)
    lines = [""]
    for part in filter(None, parts):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)


MIN_LINES = 10  # the full panel's least cap on a short terminal
COMPACT_LINES = 6  # the compact panel's cap: border, heading and four metrics
MODES = ("compact", "full", "hidden")  # `M` steps through them in this order


class MetricsBox(VerticalScroll, can_focus=False):
    """The panel's scrolling frame. ``M`` steps it through compact (the default: one
    line per family's headline metric and one per metric the reviewer's labels moved
    on the record, so the record keeps the screen), full (every
    metric, up to two thirds of the screen, then scrolling) and hidden;
    ``{``/``}`` scroll it (a Static alone does not scroll)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.mode = "compact"
        self._screen_height = 24

    def compose(self) -> ComposeResult:
        yield MetricsPanel(id="metrics")

    def fit(self, screen_height: int | None = None) -> None:
        """Set the height cap for a terminal ``screen_height`` lines tall."""
        if screen_height is not None:
            self._screen_height = screen_height
        cap = max(MIN_LINES, self._screen_height * 2 // 3)
        # compact keeps the record the screen: its moved metrics beyond these scroll
        self.styles.max_height = min(cap, COMPACT_LINES) if self.mode == "compact" else cap
        self.display = self.mode != "hidden"

    def cycle(self) -> str:
        """The next mode (compact → full → hidden → compact); the panel redraws in it."""
        return self.set_mode(MODES[(MODES.index(self.mode) + 1) % len(MODES)])

    def set_mode(self, mode: str) -> str:
        self.mode = mode
        panel = self.query_one(MetricsPanel)
        panel.compact = self.mode == "compact"
        panel.redraw()
        self.fit()
        return self.mode

    def scroll_lines(self, lines: int) -> None:
        self.scroll_relative(y=lines, animate=False)


class MetricsPanel(Static):
    """Redrawn after every committed change; ``values`` keeps what is shown for tests."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        # section -> metric -> (judge, reviewed); judge None while blind
        self.values: dict[str, dict[str, tuple[float | None, float | None]]] = {}
        self.compact = True  # one line per family: its headline metric
        self._shown: tuple = ()  # the last show()'s arguments, to redraw in another mode
        # The most lines shown since the record opened: the panel does not shrink under
        # the reviewer's keys, so the sentence rows beside it stay where they are and a
        # key does not relayout the screen (which re-measures every row: the p99 of a
        # label key, when alternate keys moved a metric in and out of the compact panel).
        self._tallest = 0

    def new_record(self) -> None:
        """Another record (or mode): the panel takes the height of what it shows again."""
        self._tallest = 0
        self.styles.min_height = None

    def redraw(self) -> None:
        self.new_record()
        if self._shown:
            self.show(*self._shown)

    def on_resize(self) -> None:
        self.redraw()  # the name column's width changed: fold the names again

    def show(
        self,
        record: Mapping[str, Mapping[str, float | None]],
        dataset: Mapping[str, Any],
        hidden_judge: bool,
        prefixes: tuple[str, ...] = (),
        counts: frozenset[str] = frozenset(),
        single: frozenset[str] = frozenset(),
        estimates: Mapping[str, Mapping[str, Any]] | None = None,
        headline: str | None = None,
    ) -> None:
        """``prefixes``: the open record's families' metrics (others are not shown);
        while the judge is hidden, the dataset's judge values and deltas are too.
        ``single``: metrics no label moves (a file's automatic scores), shown as one value.
        ``estimates``: the corrected estimates from the review draw (docs/estimate.md),
        shown under the table (not while the judge is hidden: they use its values)."""
        self._shown = (record, dataset, hidden_judge, prefixes, counts, single, estimates, headline)
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
        if self.compact:
            # the headline of each family, and every metric the reviewer's labels moved
            # on this record: a change shows its effect without opening the full panel
            heads = _headlines(names, rec_rows, headline)
            names = [
                n
                for n in names
                if n in heads or (not hidden_judge and n not in single and _moved(rec_rows, n))
            ]
        # One family (the usual case): say it once in the heading and keep rows narrow.
        family = families.pop() if len(families) == 1 else None
        table = Table.grid(padding=(0, 1))
        # Numbers are never cut: their columns are as wide as their widest cell and
        # only the name column gives way (onto more lines, at ``_`` / ``-`` / ``.``).
        table.add_column(overflow="ellipsis")
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
                d = delta(judge, reviewed, count)
                cells += [Text(pair(judge, reviewed, count)), Text(d, style="bold" if d else "")]
            label = name.split(".", 1)[1] if family and "." in name else name
            body.append([Text(label), *cells])

        # the corrected estimates of the review draw, as rows of their own under the table
        self.values["estimate"] = {}
        extra: list[list[Text]] = []
        shown_estimates = estimates if estimates is not None and not hidden_judge else {}
        for name in names:
            if name not in shown_estimates:
                continue
            est = shown_estimates[name]
            self.values["estimate"][name] = (est["estimate"], est["halfwidth"])
            half = "" if est["halfwidth"] is None else f"±{est['halfwidth']:.3f}"
            label = name.split(".", 1)[1] if family and "." in name else name
            extra.append([Text(label), Text(fmt(est["estimate"])), Text(half),
                          Text(f"n={est['n_used']}"), Text("")])  # fmt: skip
        if extra:
            extra.insert(0, [Text("estimate", style="bold"), Text("95 %", style="dim"),
                             Text(""), Text(""), Text("")])  # fmt: skip
        head = [Text(family or "metric", style="bold").append(" · M all" if self.compact else "", "dim"), Text("record", style="bold"),
                Text("Δ", style="dim"), Text("dataset", style="bold"), Text("Δ", style="dim")]  # fmt: skip
        numbers = 0
        for column in range(1, 5):
            width = max(c[column].cell_len for c in [head, *body, *extra])
            numbers += width + 1
            table.add_column(justify="right", no_wrap=True, min_width=width, width=width)
        parent = self.parent  # (a DOMNode to mypy: the box, a Widget, once mounted)
        room = self.content_region.width or (
            parent.content_region.width if isinstance(parent, Widget) else 0
        )
        if room:
            for cells in [*body, *extra]:
                folded = fold_name(cells[0].plain, room - numbers)
                if folded != cells[0].plain:
                    cells[0] = Text(folded, style=cells[0].style)
        table.add_row(*head)
        for cells in [*body, *extra]:
            table.add_row(*cells)
        # Relayout (which re-measures every sentence row beside the panel) only when the
        # panel grows; fewer lines keep its height (``_tallest``) until the next record.
        lines = sum(c[0].plain.count("\n") + 1 for c in [*body, *extra]) + 1  # + heading
        grows = lines > self._tallest
        if grows:
            self._tallest = lines
            self.styles.min_height = lines
        self.update(table, layout=grows)


# The number a family is judged by, shown alone in the compact panel (else its first
# metric the record defines).
HEADLINES = (
    "trace.adherence",
    "rgb.accuracy",
    "mtrag.rb_agg",
    "longform.f1_at_k",
    "ragas.faithfulness",
)


def _headlines(
    names: list[str],
    record: Mapping[str, tuple[float | None, float | None]],
    headline: str | None = None,
) -> list[str]:
    """One name per family: ``headline`` (the rubric's active metric) or the family's
    headline metric where the record defines it, else its first the record defines,
    else its first."""
    out: dict[str, str] = {}
    for name in names:
        family = name.split(".", 1)[0]
        if family in out:
            continue
        own = [n for n in names if n.split(".", 1)[0] == family]
        defined = [n for n in own if any(v is not None for v in record.get(n, (None, None)))]
        preferred = [h for h in (headline, *HEADLINES) if h in defined] or defined
        out[family] = (preferred or own)[0]
    return list(out.values())


def _moved(rows: Mapping[str, tuple[float | None, float | None]], name: str) -> bool:
    """Whether the record's reviewed value of ``name`` differs from the judge's."""
    judge, reviewed = rows.get(name, (None, None))
    return judge != reviewed


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
