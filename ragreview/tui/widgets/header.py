"""One-line header: dataset, reviewer, progress, the metric variant in force, the filter."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...core.safe_text import printable


class ReviewHeader(Static):
    def show(
        self, dataset: str, reviewer: str, reviewed: int, total: int, variant: str, extra: str
    ) -> None:
        self.progress = (reviewed, total)
        text = Text()
        text.append(printable(dataset, one_line=True), "bold")
        text.append(f"  {reviewed}/{total} reviewed")
        text.append(f"  {printable(reviewer, one_line=True)}")
        text.append(f"  {variant}")
        if extra:
            text.append(f"  [{extra}]")
        self.update(text, layout=False)  # always one line
