"""The review screen: record list | record view (verdicts, sentences) + metrics.

Each label action writes through ``Review`` (one durable transaction on the UI thread)
and only then redraws the row, the verdict bar, the metrics and the list entry.
"""

from __future__ import annotations

import re
import sqlite3
from array import array
from dataclasses import replace
from typing import Any

from textual import events, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer

from ...core.errors import RagreviewError, RecordError
from ...store import browse
from .. import actions
from ..model import ITEM_KEYS, Review
from ..others import WATCH_EVERY_S, OtherReviewers
from ..widgets.header import ReviewHeader
from ..widgets.metrics_panel import MetricsBox, MetricsPanel
from ..widgets.record_list import RecordList
from ..widgets.sentence_list import SentenceList
from ..widgets.verdict_bar import VerdictBar
from .help import HelpScreen
from .jobs import ReviewJobs
from .prompt import PromptScreen

KIND_NAMES = {
    "doc": "document sentences",
    "response": "response sentences",
    "fact": "facts",
    "statement": "statements",
    "reference_statement": "reference statements",
    "part": "answer parts",
}


class ReviewScreen(ReviewJobs):
    BINDINGS = actions.bindings()

    def __init__(self, review: Review, others: OtherReviewers | None = None) -> None:
        super().__init__()
        self.review = review
        self.others = others or OtherReviewers(review)
        # keyword options for the re-judge call (tests shorten the retry back-off)
        self.rejudge_options: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        yield ReviewHeader(id="header")
        with Horizontal(id="body"):
            yield RecordList(self.review.db, self.review.dataset, id="records")
            with Vertical(id="record"):
                yield VerdictBar(id="verdicts")
                yield SentenceList(id="sentences")
                yield MetricsBox(id="metrics-box")
        yield Footer()

    @property
    def records(self) -> RecordList:
        return self.query_one(RecordList)

    @property
    def sentences(self) -> SentenceList:
        return self.query_one(SentenceList)

    def on_resize(self, event: events.Resize) -> None:
        self.query_one(MetricsBox).fit(event.size.height)

    def on_mount(self) -> None:
        self.query_one(MetricsBox).fit(self.app.size.height)
        self.records.load()
        self.records.leased = self.others.holders()
        self.set_interval(WATCH_EVERY_S, self._watch_others)
        first = self.others.first_unreviewed()
        if first is None and self.records.ids:
            first = self.records.ids[0]
        if first is not None:
            self.open_record(first)
        else:
            self.refresh_header()

    # -- drawing ------------------------------------------------------------------------

    def open_record(self, rowid: int, cursor: int | None = None) -> None:
        holder = self.others.open(rowid)
        if holder is not None:
            self.notify(f"{holder} has this record open", severity="warning", markup=False)
        self.review.open(rowid)
        self.sentences.show(self.review, self.review.first_cursor() if cursor is None else cursor)
        self.records.show(rowid)
        self.refresh_record()

    def refresh_record(self, index: int | None = None, *, rows: bool = False) -> None:
        """Redraw what a committed change affects (one row, or all rows with ``rows``)."""
        if rows or index is not None:
            self.sentences.refresh_marks(self.review, index)
        self.sentences.refresh_info(self.review)
        self.query_one(VerdictBar).show(self.review.verdicts(), self.review.hidden)
        self.query_one(MetricsPanel).show(
            self.review.record_metrics(), self.review.dataset_metrics(), self.review.hidden
        )
        self.records.invalidate(self.review.rowid)
        self.refresh_header()

    def refresh_header(self) -> None:
        reviewed, total = self.review.progress()
        extra = self.records.filter.describe()
        if self.review.hidden:
            extra += " · BLIND"
        self.query_one(ReviewHeader).show(
            self.review.dataset, self.review.reviewer, reviewed, total, self.review.variant(), extra
        )

    def _watch_others(self) -> None:
        """Another reviewer committed: redraw what they may have changed (progress,
        dataset metrics, list marks, leases; the open record too, should it be theirs)."""
        if not self.others.committed():
            return
        self.records.leased = self.others.holders()
        self.records.forget_rows()
        if self.review.stored is not None:
            # re-read, not re-open: a blind record the reviewer revealed stays revealed
            self.review._reload()
            self.refresh_record(rows=True)
        else:
            self.refresh_header()

    def on_record_list_record_selected(self, message: RecordList.RecordSelected) -> None:
        self.open_record(message.rowid)

    # -- labels -------------------------------------------------------------------------

    def _commit(self, change, index: int | None) -> None:
        """Run one store write; show an error instead of a traceback when it is refused."""
        try:
            change()
        except (RagreviewError, RecordError) as err:
            self.notify(str(err), severity="error")
            return
        except sqlite3.Error as err:  # e.g. the DB stayed locked past the busy timeout
            self.notify(f"not saved: {err}", severity="error")
            return
        self.refresh_record(index)

    def action_cursor(self, step: int) -> None:
        self.sentences.move_to(self.sentences.cursor + step)

    def action_label(self, which: str) -> None:
        item = self.sentences.item
        if self.review.stored is None or item is None:
            return
        name = ITEM_KEYS[which].get(item.kind)
        if name is None:
            kinds = ", ".join(KIND_NAMES[k] for k in ITEM_KEYS[which])
            self.notify(f"{which} applies to {kinds}", severity="warning")
            return
        target = item.target(name)
        # A context-level label shows on every sentence of its document: redraw them all.
        index = None if target != item.key else self.sentences.cursor
        self._commit(lambda: self.review.cycle(name, target), index)
        if index is None:
            self.sentences.refresh_marks(self.review)

    def action_verdict(self, name: str) -> None:
        if self.review.stored is not None:
            self._commit(lambda: self.review.cycle(name, "*"), None)

    def action_rating(self) -> None:
        """Prompt for the RAD-Bench rating (1–10); empty drops yours (the judge's shows)."""
        if self.review.stored is None:
            return
        current = self.review.mark("rb_llm_rating", "*").value

        def done(text: str | None) -> None:
            if text is None:
                return
            text = text.strip()
            if not text:
                self._commit(lambda: self.review.set("rb_llm_rating", "*", None), None)
                return
            try:
                number = float(text)
            except ValueError:
                self.notify(f"rating: not a number: {text!r}", severity="error")
                return
            value = int(number) if number.is_integer() else number
            self._commit(lambda: self.review.set("rb_llm_rating", "*", value), None)

        self.app.push_screen(
            PromptScreen(
                f"Rating of {self.review.stored.id}",
                "" if current is None else str(current),
                "a number from 1 to 10; empty: back to the judge's",
            ),
            done,
        )

    def action_revert(self) -> None:
        if self.review.stored is None:
            return
        item = self.sentences.item
        done = self.review.revert(item) if item else 0
        if not done:
            done = self.review.revert(None)  # nothing on the sentence: the verdicts
        if not done:
            self.notify("no label of yours to revert here")
        self.refresh_record(self.sentences.cursor if item else None)

    def action_support_keys(self) -> None:
        item = self.sentences.item
        if item is None or item.kind != "response":
            self.notify("supporting keys belong to response sentences", severity="warning")
            return
        current = self.review.mark("support_keys", item.key).value or []
        index = self.sentences.cursor

        def done(text: str | None) -> None:
            if text is None:
                return
            keys = [k for k in re.split(r"[\s,]+", text.strip()) if k]
            self._commit(lambda: self.review.set("support_keys", item.key, keys), index)

        self.app.push_screen(
            PromptScreen(
                f"Supporting keys of {item.key}",
                " ".join(current),
                "document keys or general / well_known_fact / numerical_reasoning / "
                "supported_without_sentence",
            ),
            done,
        )

    # -- records ------------------------------------------------------------------------

    def action_record(self, step: int) -> None:
        current = self.review.stored.rowid if self.review.stored else None
        rowid = self.records.neighbour(current, step)
        held = self.others.holders()  # records other reviewers have open are passed by
        while rowid is not None and rowid in held:
            rowid = self.records.neighbour(rowid, step)
        if rowid is None:
            self.notify("end of the list" if step > 0 else "start of the list")
            return
        self.open_record(rowid)

    def _scan(self, want, start: int) -> int | None:
        """Index of the first list row from ``start`` (wrapping) for which ``want(row)``."""
        n = len(self.records.ids)
        for offset in range(n):
            index = (start + offset) % n
            row = self.records.row(index)
            if row is not None and want(row):
                return index
        return None

    def _start_after_current(self) -> int:
        if self.review.stored is None:
            return 0
        index = self.records.index_of(self.review.rowid)
        return 0 if index is None else index + 1

    def action_review_next(self) -> None:
        if self.review.stored is None:
            return
        self.review.mark_reviewed()
        self.records.invalidate(self.review.rowid)
        held = self.others.holders()
        index = self._scan(
            lambda row: row.status != "reviewed" and row.rowid not in held,
            self._start_after_current(),
        )
        if index is None:
            self.notify("every record in the list is reviewed")
            self.refresh_record()
            return
        self.open_record(self.records.ids[index])

    def action_next_disagreement(self) -> None:
        if self.review.stored is None:
            return
        rows = self.sentences.rows
        for index in range(self.sentences.cursor + 1, len(rows)):
            if self.review.item_disagrees(rows[index].item):
                self.sentences.move_to(index)
                return
        current = self.review.rowid
        candidates = browse.disagreeing(self.review.db, self.review.dataset) - {current}
        places = sorted(i for r in candidates if (i := self.records.index_of(r)) is not None)
        if not places:
            self.notify("no other disagreement in the list")
            return
        start = self._start_after_current()
        found = next((i for i in places if i >= start), places[0])  # wrap around
        self.open_record(self.records.ids[found])
        first = next(
            (i for i, it in enumerate(self.review.items) if self.review.item_disagrees(it)), None
        )
        if first is not None:
            self.sentences.move_to(first)

    # -- filters ------------------------------------------------------------------------

    def _apply_filter(self, flt: browse.ListFilter, ids: array | None = None) -> None:
        if flt.text and ids is None:  # a text search reads every record: off the UI thread
            self.notify(f"searching for {flt.text!r}…")
            self._search(browse.database_path(self.review.db), flt)
            return
        self.records.load(flt, ids)
        if self.review.stored is not None and self.records.index_of(self.review.rowid) is not None:
            self.records.show(self.review.rowid)
        elif self.records.ids:
            self.open_record(self.records.ids[0])
        else:
            self.notify("no record matches this filter", severity="warning")
        self.refresh_header()

    def action_filter(self, kind: str) -> None:
        flt = self.records.filter
        if kind == "disagreement":
            self._apply_filter(replace(flt, disagreement=not flt.disagreement))
        else:
            self._apply_filter(replace(flt, status=None if kind == "all" else kind))

    def action_next_task(self) -> None:
        tasks = [None, *browse.tasks(self.review.db, self.review.dataset)]
        current = self.records.filter.task
        following = tasks[(tasks.index(current) + 1) % len(tasks)] if current in tasks else None
        self._apply_filter(replace(self.records.filter, task=following))

    def action_sort_delta(self) -> None:
        flt = self.records.filter
        self._apply_filter(replace(flt, sort="position" if flt.sort == "delta" else "delta"))

    def action_search(self) -> None:
        def done(text: str | None) -> None:
            if text is not None:
                self._apply_filter(replace(self.records.filter, text=text.strip() or None))

        self.app.push_screen(
            PromptScreen(
                "Search record ids and text", self.records.filter.text or "", "empty: all"
            ),
            done,
        )

    # -- history, notes, blind, export, help -------------------------------------------------

    def _step(self, redo: bool) -> None:
        rowid = self.review.undo(redo=redo)
        if rowid is None:
            self.notify(f"nothing to {'redo' if redo else 'undo'}")
            return
        if self.review.stored is not None and rowid == self.review.rowid:
            self.refresh_record(rows=True)
        else:
            self.records.invalidate(rowid)
            self.open_record(rowid)

    def action_undo(self) -> None:
        self._step(redo=False)

    def action_redo(self) -> None:
        self._step(redo=True)

    def action_note(self) -> None:
        if self.review.stored is None:
            return

        def done(text: str | None) -> None:
            if text is not None:
                self._commit(lambda: self.review.set_note(text.strip()), None)

        self.app.push_screen(
            PromptScreen(
                f"Note on {self.review.stored.id}", self.review.stored.note or "", "empty clears"
            ),
            done,
        )

    def action_blind(self) -> None:
        """Reveal the judge's labels on a blind record, or hide them (blind mode on)."""
        if self.review.hidden:
            self.review.revealed = True
        else:
            self.review.blind = True
            self.review.revealed = False
        self.refresh_record(rows=True)

    def leave_blind(self) -> None:
        self.review.blind = False
        self.review.revealed = True
        self.refresh_record(rows=True)

    @work(thread=True, exclusive=True, group="search")
    def _search(self, db_path: str, flt: browse.ListFilter) -> None:
        from ...store import open_database

        db = open_database(db_path)  # a worker never shares the UI thread's connection
        try:
            ids = browse.rowids(db, self.review.dataset, flt)
        finally:
            db.conn.close()
        self.app.call_from_thread(self._apply_filter, flt, ids)

    def action_metrics_expand(self) -> None:
        self.query_one(MetricsBox).toggle_expanded()

    def action_metrics_scroll(self, lines: int) -> None:
        self.query_one(MetricsBox).scroll_lines(lines)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())
