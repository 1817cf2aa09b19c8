"""The record list's filters, search and review queue on the review screen: what ``/``,
the filter keys and ``8`` do. ``RecordScreen`` draws the record; ``ReviewScreen`` adds
the label keys on top of these."""

from __future__ import annotations

from array import array
from dataclasses import replace

from textual import work
from textual.message import Message

from ...core.errors import RagreviewError
from ...store import browse, review_draws
from .. import review_queue
from .record_screen import RecordScreen

# The search's parser (core.where), the queue draws and the prompt screen are imported
# by the keys that use them: the first screen draws without them (issue 27).


def _terms(flt: browse.ListFilter) -> str:
    """The filter as typed after ``/``: its ``field=value`` terms, then its words."""
    return " ".join([*(c.describe() for c in flt.where), *([flt.text] if flt.text else [])])


def _toggled(flt: browse.ListFilter, kind: str, on: bool) -> browse.ListFilter:
    """The filter with one of its on/off restrictions set (one field each: checked)."""
    if kind == "disagreement":
        return replace(flt, disagreement=on)
    if kind == "conflicts":
        return replace(flt, conflicts=on)
    if kind == "sample":
        return replace(flt, sample=on)
    return replace(flt, runs_disagree=on)


class RecordLists(RecordScreen):
    class SearchDone(Message):
        """A background search finished: its filter and the rowids found."""

        def __init__(self, flt: browse.ListFilter, ids: array) -> None:
            self.flt = flt
            self.ids = ids
            super().__init__()

    def _apply_filter(self, flt: browse.ListFilter, ids: array | None = None) -> None:
        if (flt.text or flt.where) and ids is None:  # reads every record: off the UI thread
            self.notify(f"searching: {_terms(flt)}…")
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
            return
        if flt.text or flt.where:
            self.notify(f"{len(self.records.ids)} records match {_terms(flt)}")
        self.refresh_header()

    def action_filter(self, kind: str) -> None:
        flt = self.records.filter
        if kind == "all":  # every filter off; the sort order stays
            self._apply_filter(browse.ListFilter(sort=flt.sort))
        elif kind in ("disagreement", "conflicts", "sample", "runs_disagree"):
            on = not getattr(flt, kind)
            if on and kind in ("disagreement", "runs_disagree") and self._blind_refuses(kind):
                return
            if (
                on
                and kind == "sample"
                and browse.latest_sample(self.review.db, self.review.dataset) is None
            ):
                self.notify(
                    "no sample drawn for this dataset (ragreview sample)", severity="warning"
                )
                return
            self._apply_filter(_toggled(flt, kind, on))
        else:
            self._apply_filter(replace(flt, status=kind))

    def action_next_task(self) -> None:
        tasks = [None, *browse.tasks(self.review.db, self.review.dataset)]
        current = self.records.filter.task
        following = tasks[(tasks.index(current) + 1) % len(tasks)] if current in tasks else None
        self._apply_filter(replace(self.records.filter, task=following))

    def action_sort_delta(self) -> None:
        flt = self.records.filter
        if flt.sort != "delta" and self._blind_refuses("sort by metric change"):
            return
        self._apply_filter(replace(flt, sort="position" if flt.sort == "delta" else "delta"))

    def action_search(self) -> None:
        """``/``: plain words search ids and text; ``field=value`` terms filter by source
        fields and label values (``core.where``, as ``ragreview queue --where``)."""
        from ...core import where
        from .prompt import PromptScreen

        def done(text: str | None) -> None:
            if text is None:
                return
            try:
                query = where.parse(text.strip())
            except RagreviewError as err:
                self.notify(str(err), severity="error")
                return
            flt = replace(self.records.filter, text=query.text, where=query.conditions)
            self._apply_filter(flt)

        self.app.push_screen(
            PromptScreen(
                "Search words, or filter field=value",
                _terms(self.records.filter),
                "model=gpt turn=3 answerability=UNANSWERABLE judge.supported=false "
                "judge.fact=IR; empty: all",
            ),
            done,
        )

    def action_queue(self) -> None:
        """Draw a review queue (docs/estimate.md) and show only it, in draw order."""
        from ...services import queue_draws
        from .prompt import PromptScreen

        db, dataset = self.review.db, self.review.dataset

        def done(text: str | None) -> None:
            if text is None:
                return
            if text.strip():
                try:
                    strategy, n, seed = review_queue.parse(text)
                    drawn = queue_draws.draw(db, dataset, strategy, n, seed)
                except RagreviewError as err:
                    self.notify(str(err), severity="error")
                    return
                self.notify(f"draw {drawn.id}: {len(drawn.members)} records ({strategy})")
            elif review_draws.latest(db, dataset) is None:
                self.notify("no review queue drawn yet", severity="warning")
                return
            self._apply_filter(browse.ListFilter(queue=True))
            # the estimate counts the draw reviewed in its order: start at its first open record
            first = (
                self._scan(lambda row: row.status != "reviewed", 0) if self.records.ids else None
            )
            if first is not None:
                self.open_record(self.records.ids[first])

        latest = review_draws.latest(db, dataset)
        last = f"{latest.strategy} {latest.n} {latest.seed}" if latest else "random 50 0"
        hint = (
            f"STRATEGY N [SEED]; strategies: {', '.join(queue_draws.STRATEGIES)}; empty: the latest"
        )
        self.app.push_screen(PromptScreen("Draw a review queue", last, hint), done)

    @work(thread=True, exclusive=True, group="search")
    def _search(self, db_path: str, flt: browse.ListFilter) -> None:
        from ...store import open_database

        db = open_database(db_path)  # a worker never shares the UI thread's connection
        try:
            ids = browse.rowids(db, self.review.dataset, flt)
        finally:
            db.conn.close()
        self.post_message(self.SearchDone(flt, ids))

    def on_record_lists_search_done(self, message: SearchDone) -> None:
        self._apply_filter(message.flt, message.ids)
