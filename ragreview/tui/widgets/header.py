"""One-line header: filter, progress, reviewer, the open record's family and its
settings, then the dataset name (last: the part an 80-column terminal may cut)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ..text import one_line


class ReviewHeader(Static):
    def show(
        self,
        dataset: str,
        reviewer: str,
        reviewed: int,
        total: int,
        variant: str,
        extra: str,
        family: str = "",
    ) -> None:
        self.progress = (reviewed, total)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"[{extra}]", "bold")
        text.append(f" {reviewed}/{total} reviewed")
        text.append(f"  {one_line(reviewer)}")
        if family:
            text.append(f"  {family}")
        if variant:
            text.append(f" {variant}")
        text.append("  ")
        text.append(one_line(dataset), "bold")
        self.update(text, layout=False)  # always one line
