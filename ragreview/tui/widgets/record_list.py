"""The record list: a virtual ScrollView drawing rows with the Line API.

Only the ordered rowids of the filtered records live in memory (an ``array``); the
columns a row shows are fetched from SQLite a page at a time when the row is drawn,
so 100,000 records cost one query and a few hundred kilobytes, never 100,000 widgets.
"""

from __future__ import annotations

from array import array
from functools import partial
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...store import browse
from ...store.browse import ListFilter, ListRow
from ..row_label import label, shared_prefix

if TYPE_CHECKING:  # (the handle open_database gives needs no sqlite-utils: issue 27, start-up)
    import sqlite_utils

PAGE = 100
HEAD = 2 * PAGE  # rows read before the first screen (load_head)
MAX_PAGES = 50  # pages kept in memory; older ones are dropped and fetched again if needed
STATUS_GLYPH = {"reviewed": "✓", "stale": "!", "unreviewed": "·"}


class RecordList(ScrollView, can_focus=False):
    """Records of the dataset passing the current filter, in list order."""

    COMPONENT_CLASSES = {
        "record-list--row",
        "record-list--current",
        "record-list--reviewed",
        "record-list--stale",
        "record-list--disagree",
        "record-list--leased",
    }

    class RecordSelected(Message):
        """The reviewer clicked a record in the list."""

        def __init__(self, rowid: int) -> None:
            self.rowid = rowid
            super().__init__()

    def __init__(self, db: sqlite_utils.Database, dataset: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.db = db
        self.dataset = dataset
        self.filter = ListFilter()
        self.ids: array = array("q")
        self._index: dict[int, int] | None = None
        self._pages: dict[int, dict[int, ListRow]] = {}
        self.current: int | None = None  # rowid of the open record
        self._prefix: str | None = None  # what every id of the dataset starts with
        # blind mode: no `≠` on a record until it is marked reviewed (the judge's trace)
        self.blind = False
        self.leased: dict[int, str] = {}  # rowid -> the other reviewer who has it open

    # -- data -------------------------------------------------------------------------

    def load(self, flt: ListFilter | None = None, ids: array | None = None) -> None:
        """Run the filter query (or take its result) and redraw the new list."""
        if flt is not None:
            self.filter = flt
        self.ids = browse.rowids(self.db, self.dataset, self.filter) if ids is None else ids
        self._index = None
        self._pages.clear()
        self.virtual_size = Size(self.size.width, len(self.ids))
        self.refresh()

    def load_head(self) -> None:
        """Only the first rows of the list, for the first screen: reading every rowid is
        proportional to the dataset (a second at 300,000 records on a busy machine), and
        nothing that is should run before the first record is drawn (issue 27). The
        screen calls ``load_rest()`` for the whole list right after the first refresh."""
        self.load(ids=browse.rowids(self.db, self.dataset, self.filter, limit=HEAD))

    def load_rest(self) -> None:
        """The whole list after a ``load_head``: read in a thread on its own connection,
        so the UI takes keys meanwhile (on the UI thread the read held every key for up
        to a second at 300,000 records), then swapped in on the UI thread unless another
        filter was loaded since. A list shorter than the head is already whole; a DB
        with no file behind it (in memory) is read here."""
        if len(self.ids) < HEAD:
            return
        path = browse.database_path(self.db)
        if not path:
            self._took_rest(self.filter, browse.rowids(self.db, self.dataset, self.filter))
            return
        read = partial(self._read_rest, path, self.filter)
        self.run_worker(read, thread=True, exclusive=True, group="record-list")

    def _read_rest(self, path: str, flt: ListFilter) -> None:
        from ...store import open_database

        db = open_database(path, read_only=True)  # never the UI thread's connection
        try:
            ids = browse.rowids(db, self.dataset, flt)
        finally:
            db.conn.close()
        try:
            self.app.call_from_thread(self._took_rest, flt, ids)
        except RuntimeError:  # the app closed meanwhile: no list to complete
            pass

    def _took_rest(self, flt: ListFilter, ids: array) -> None:
        if flt is not self.filter:
            return  # another filter was loaded meanwhile: this list is not the shown one
        scrolled = self.scroll_offset.y
        self.load(ids=ids)
        self.scroll_to(y=scrolled, animate=False)
        if self.current is not None:
            self.show(self.current)

    def index_of(self, rowid: int) -> int | None:
        if self._index is None:  # built lazily: most sessions only page forward
            self._index = {r: i for i, r in enumerate(self.ids)}
        return self._index.get(rowid)

    def _position(self, rowid: int) -> int | None:
        """``index_of`` without building the index: one scan in C (building it for
        300,000 records took tens of milliseconds, on the first label key)."""
        if self._index is not None:
            return self._index.get(rowid)
        try:
            return self.ids.index(rowid)
        except ValueError:
            return None

    def neighbour(self, rowid: int | None, step: int) -> int | None:
        """The rowid ``step`` places away in the list (None past either end)."""
        if not self.ids:
            return None
        index = None if rowid is None else self.index_of(rowid)
        if index is None:
            return self.ids[0] if step > 0 else self.ids[-1]
        target = index + step
        return self.ids[target] if 0 <= target < len(self.ids) else None

    def invalidate(self, rowid: int) -> None:
        """Read ``rowid``'s row again (its status or labels changed) into its cached page
        and redraw its line only: this runs on every label key (re-reading the page's
        hundred rows cost a few milliseconds of every key)."""
        index = self._position(rowid)
        if index is not None:
            page = self._pages.get(index // PAGE)
            if page is not None:
                page.update(browse.rows(self.db, [rowid]))
            self.refresh_line(index)

    def forget_rows(self) -> None:
        """Forget every cached row (another reviewer committed)."""
        self._pages.clear()
        self.refresh()

    def row(self, index: int) -> ListRow | None:
        page = index // PAGE
        rows = self._pages.get(page)
        if rows is None:
            if len(self._pages) >= MAX_PAGES:
                self._pages.pop(next(iter(self._pages)))
            rows = browse.rows(self.db, self.ids[page * PAGE : (page + 1) * PAGE])
            self._pages[page] = rows
        return rows.get(self.ids[index])

    def show(self, rowid: int) -> None:
        """Mark ``rowid`` as the open record and scroll it into view."""
        self.current = rowid
        index = self._position(rowid)
        if index is not None:
            height = max(1, self.scrollable_content_region.height)
            top = self.scroll_offset.y
            if not top <= index < top + height:
                self.scroll_to(y=max(0, index - height // 3), animate=False)
        self.refresh()

    # -- drawing ----------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        base = self.get_component_rich_style("record-list--row")
        if index >= len(self.ids):
            return Strip.blank(width, base)
        row = self.row(index)
        if row is None:
            return Strip.blank(width, base)
        style = base
        if row.status == "reviewed":
            style += self.get_component_rich_style("record-list--reviewed")
        elif row.status == "stale":
            style += self.get_component_rich_style("record-list--stale")
        if row.rowid == self.current:
            style += self.get_component_rich_style("record-list--current")
        shows_judge = row.disagrees and (not self.blind or row.status == "reviewed")
        flag = Segment("≠" if shows_judge else " ", style + self._disagree_style(row, shows_judge))
        head = f"{STATUS_GLYPH.get(row.status, '?')}{'✎' if row.has_note else ' '}"
        if self._prefix is None:
            self._prefix = shared_prefix(*browse.id_range(self.db, self.dataset))
        # what tells the record apart (turn and model, the id's end), then the question
        rid = label(row.id, row.question, max(1, width - 4), self._prefix)
        # "@" before the id: another reviewer has the record open (their lease)
        leased = self.get_component_rich_style("record-list--leased")
        segments = [
            Segment(head, style),
            flag,
            Segment("@", style + leased) if row.rowid in self.leased else Segment(" ", style),
            Segment(rid, style),
        ]
        return Strip(segments).crop_extend(0, width, style)

    def _disagree_style(self, row: ListRow, shown: bool) -> Style:
        if not shown:
            return Style()
        return self.get_component_rich_style("record-list--disagree")

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, len(self.ids))

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < len(self.ids):
            self.post_message(self.RecordSelected(self.ids[index]))
