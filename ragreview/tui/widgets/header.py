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
        self._shown = (dataset, reviewer, reviewed, total, variant, extra, family)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"[{extra}]", "bold")
        text.append(f" {reviewed}/{total} reviewed")
        text.append(f"  {one_line(reviewer)}")
        if family:
            text.append(f"  {family}")
        if variant:
            text.append(f" {variant}")
        text.append("  ")
        # Cut the name by hand: one long word would otherwise wrap out of the one line.
        room = self.content_region.width - text.cell_len
        name = one_line(dataset)
        if self.content_region.width and len(name) > room:
            name = name[: max(0, room - 1)] + "…" if room > 1 else ""
        text.append(name, "bold")
        self.update(text, layout=False)  # always one line

    def on_resize(self) -> None:
        if getattr(self, "_shown", None):  # the dataset name is cut to the new width
            self.show(*self._shown)
