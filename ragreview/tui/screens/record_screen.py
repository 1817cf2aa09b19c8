"""The review screen's frame: record list | record view (verdicts, items) + metrics,
header, status line and keys; moving between records and items, undo, notes, blind
mode. ``RecordLists`` adds the list's filters, search and queue, ``ReviewScreen`` the
label keys on top. Everything it shows it reads through its model (``Review``).
"""

from __future__ import annotations

import json
import sqlite3

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical

from ...core.errors import RagreviewError, RecordError
from ...store import browse
from .. import actions, review_queue
from .. import rubric as rubric_panel
from ..model import Review
from ..numbers import Numbers
from ..others import WATCH_EVERY_S, OtherReviewers
from ..widgets.header import ReviewHeader
from ..widgets.key_bar import KeyBar, StatusLine
from ..widgets.metrics_panel import MetricsBox, MetricsPanel
from ..widgets.record_list import RecordList
from ..widgets.sentence_list import SentenceList
from ..widgets.verdict_bar import VerdictBar
from .jobs import ReviewJobs

# The help and prompt screens are imported by the keys that open them: the first screen
# draws without them (issue 27).


def _describe_step(word: str, event) -> str:
    """``undone: relevant 0a on covid-1 (now ✗, the judge's)``: what a step changed."""
    if event is None:
        return f"{word} done"
    done = {"undo": "undone", "redo": "redone"}[word]
    if event.name.startswith("_"):  # a fact / statement list edit
        return f"{done}: the {event.name[1:].replace('_', ' ')} edit on {event.record}"
    now = "the judge's" if event.new is None else json.dumps(event.new, ensure_ascii=False)
    rule = f", rule {event.rule}" if event.rule else ""  # the rule follows the value
    return f"{done}: {event.name} {event.target} on {event.record} (now {now}{rule})"


_NEXT_MODE = {"compact": "full", "full": "hidden", "hidden": "compact"}

# Keys besides the record's label keys that the footer always names.
COMMON_FOOTER = ("review-next", "toggle-blind", "help")


class RecordScreen(ReviewJobs):
    def __init__(self, review: Review, others: OtherReviewers | None = None) -> None:
        super().__init__(review)
        # the other reviewers of a served DB: their leases and commits
        self.others = others or OtherReviewers(review)
        self.verdict_cursor: str | None = None  # the verdict ⌫ reverts: the last one set
        self._estimates = True  # read the review draw's estimate with the numbers

    def compose(self) -> ComposeResult:
        yield ReviewHeader(id="header")
        with Horizontal(id="body"):
            yield RecordList(self.review.db, self.review.dataset, id="records")
            with Vertical(id="record"):
                yield VerdictBar(id="verdicts")
                yield SentenceList(id="sentences")
                yield MetricsBox(id="metrics-box")
        yield StatusLine(id="status")
        yield KeyBar(id="keys")

    def say(self, message: str, severity: str = "information") -> None:
        """One line at the bottom (toasts would cover the metrics panel)."""
        self.query_one(StatusLine).say(message, severity)

    def on_key(self, event: events.Key) -> None:
        """A key ends the previous message (runs before the key's own action)."""
        self.query_one(StatusLine).clear()

    @property
    def records(self) -> RecordList:
        return self.query_one(RecordList)

    @property
    def sentences(self) -> SentenceList:
        return self.query_one(SentenceList)

    def on_resize(self, event: events.Resize) -> None:
        self.query_one(MetricsBox).fit(event.size.height)

    def on_mount(self) -> None:
        self.query_one(MetricsBox).set_mode(getattr(self.app, "panel_mode", "compact"))
        self.query_one(MetricsBox).fit(self.app.size.height)
        # The list's first rows only: the whole list comes right after the first refresh
        # (_load_whole_list), so the first record is drawn before anything proportional
        # to the dataset runs (issue 27: 1.7-2.2 s to the first screen at 300,000).
        self.records.load_head()
        self.records.leased = self.others.holders()
        self.set_interval(WATCH_EVERY_S, self._watch_others)
        first = self.others.first_unreviewed()
        if first is None and self.records.ids:
            first = self.records.ids[0]
        if first is not None:
            # The review draw's estimate (its members' statuses and values: ~14 ms cold
            # at 300,000) comes right after the first frame, like the list's rest.
            self._estimates = False
            self.open_record(first)
            self._estimates = True
            self.call_after_refresh(self.refresh_record)
        else:
            self.refresh_header()
        self.call_after_refresh(self._load_whole_list)

    def _load_whole_list(self) -> None:
        self.records.load_rest()
        conflicted = browse.conflicted_count(self.review.db, self.review.dataset)
        if conflicted:
            self.notify(f"{conflicted} records have reviewer conflicts: 6 lists them")

    # -- drawing ------------------------------------------------------------------------

    def open_record(self, rowid: int, cursor: int | None = None) -> None:
        holder = self.others.open(rowid)
        if holder is not None:
            self.notify(f"{holder} has this record open", severity="warning")
        self.review.open(rowid)
        self.verdict_cursor = None
        self.query_one(MetricsPanel).new_record()
        self.records.blind = self.review.blind
        self.sentences.show(self.review, self.review.first_cursor() if cursor is None else cursor)
        self.records.show(rowid)
        self.refresh_record()
        self.refresh_keys()

    def _rebuild(self, key: str | None = None) -> None:
        """Redraw the whole record after its items changed; cursor on ``key``."""
        cursor = self.sentences.cursor
        if key is not None:
            cursor = next((i for i, it in enumerate(self.review.items) if it.key == key), cursor)
        self.sentences.show(self.review, min(cursor, max(0, len(self.review.items) - 1)))
        self.refresh_record()
        self.refresh_keys()

    def refresh_keys(self) -> None:
        """The footer: the open record's label keys (from its families), then the rest."""
        label_keys: list[tuple[str, str]] = []
        seen = set()
        for family in self.review.families:
            for use in family.keys:
                if use.action in self.review.keys and use.key not in seen:
                    seen.add(use.key)
                    label_keys.append((use.key, use.word))
        common = [(actions.BY_ID[i].shown, actions.BY_ID[i].footer) for i in COMMON_FOOTER]
        self.query_one(KeyBar).show(label_keys, common)

    def applicable(self, action: actions.ReviewAction) -> bool:
        """A label action applies only where the open record's families declare it."""
        return not action.is_label or action.id in self.review.keys

    def refresh_record(self, index: int | None = None, *, rows: bool = False) -> None:
        """Redraw what a committed change affects (one row, or all rows with ``rows``)."""
        if rows or index is not None:
            self.sentences.refresh_marks(self.review, index)
        self.sentences.refresh_info(self.review)
        rubric, hidden = self.review.rubric, self.review.hidden
        assert self.review.stored is not None
        human = self.review.stored.human
        self.query_one(VerdictBar).show(
            self.review.verdicts(),
            hidden,
            rubric.lines(human, hidden) if rubric.names else None,
            rubric.letters() if rubric.names and not hidden else None,
            active=self.verdict_cursor,
        )
        numbers = self.review.numbers(metrics=not rubric.names, estimates=self._estimates)
        if rubric.names:  # declared human metrics: the annotators' aggregate → yours
            record, dataset, single = rubric.panel(human)
            counts = frozenset(rubric_panel.PREFIX + n for n in rubric.names) | single
            self.query_one(MetricsPanel).show(
                record, dataset, hidden, (rubric_panel.PREFIX,), counts, single,
                headline=rubric_panel.PREFIX + (rubric.active or ""),
            )  # fmt: skip
        else:
            assert numbers.record is not None and numbers.dataset is not None
            self.query_one(MetricsPanel).show(
                numbers.record,
                numbers.dataset,
                hidden,
                self.review.metric_prefixes(),
                self.review.metric_counts(),
                estimates=numbers.drawn_estimates,
            )
        self.records.invalidate(self.review.rowid)
        self.refresh_header(numbers)

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

    def refresh_header(self, numbers: Numbers | None = None) -> None:
        if numbers is None:
            numbers = self.review.numbers(metrics=False)
        reviewed, total = numbers.reviewed, numbers.total
        extra = self.records.filter.describe()
        if self.review.hidden:
            extra += " · BLIND"
        # the stopping rule (docs/estimate.md): reviews still needed for the target width
        if stop := review_queue.stopping(numbers.estimates):
            extra += " · " + stop
        family = self.review.family_names if self.review.stored is not None else ""
        self.query_one(ReviewHeader).show(
            self.review.dataset,
            self.review.reviewer,
            reviewed,
            total,
            self.review.variant() if self.review.stored is not None else "",
            extra,
            family,
        )

    def on_record_list_record_selected(self, message: RecordList.RecordSelected) -> None:
        self.open_record(message.rowid)

    # -- labels -------------------------------------------------------------------------

    def _commit(self, change, index: int | None) -> bool:
        """Run one store write; show an error instead of a traceback when it is refused."""
        try:
            change()
        except (RagreviewError, RecordError) as err:
            self.notify(str(err), severity="error")
            return False
        except sqlite3.Error as err:  # e.g. the DB stayed locked past the busy timeout
            self.notify(f"not saved: {err}", severity="error")
            return False
        self.refresh_record(index)
        return True

    def action_cursor(self, step: int) -> None:
        self.sentences.step(step)

    def action_cell(self, step: int) -> None:
        if not self.sentences.step_cell(step):
            self.notify("← →: no claim × chunk cells on this row (RAGChecker claims)")

    def action_edge(self, end: bool) -> None:
        self.sentences.edge(end)

    def action_page(self, pages: int) -> None:
        self.sentences.page(pages)

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

    def _blind_refuses(self, what: str) -> bool:
        """Disagreements and deltas show the judge: not while its labels are hidden."""
        if self.review.blind:
            self.notify(
                f"{what}: not in blind mode (it would show the judge's labels; "
                "^p: Leave blind mode)"
            )
            return True
        return False

    def action_next_disagreement(self) -> None:
        if self.review.stored is None or self._blind_refuses("next disagreement"):
            return
        items = self.sentences.items
        for index in range(self.sentences.cursor + 1, len(items)):
            if self.review.item_disagrees(items[index]):
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

    # -- history, notes, blind, export, help -------------------------------------------------

    def _step(self, redo: bool) -> None:
        word = "redo" if redo else "undo"
        rowid = self.review.undo(redo=redo)
        if rowid is None:
            self.notify(f"nothing to {word}")
            return
        if self.review.stored is not None and rowid == self.review.rowid:
            if self.sentences.items != self.review.items:
                self._rebuild()  # a fact/statement edit was undone or redone
            else:
                self.refresh_record(rows=True)
        else:
            self.records.invalidate(rowid)
            self.open_record(rowid)
        self.notify(_describe_step(word, self.review.last_step))

    def action_undo(self) -> None:
        self._step(redo=False)

    def action_redo(self) -> None:
        self._step(redo=True)

    def action_note(self) -> None:
        from .prompt import PromptScreen

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
        self.review.toggle_blind()
        self.records.blind = self.review.blind
        self.records.forget_rows()
        self.notify("judge hidden (blind)" if self.review.hidden else "judge shown")
        self.refresh_record(rows=True)
        self.sentences.fill_record_reasons(self.review)  # the judge's words hide with it

    def leave_blind(self) -> None:
        self.review.leave_blind()
        self.records.blind = False
        self.records.forget_rows()
        self.refresh_record(rows=True)
        self.sentences.fill_record_reasons(self.review)

    def on_review_jobs_job_done(self, done: ReviewJobs.JobDone) -> None:
        self.notify(done.message, severity=done.severity)  # type: ignore[arg-type]
        if done.written is not None and self.app.is_web:
            # served to a browser: the file is on the server, send the browser a copy
            self.app.deliver_binary(done.written)
        rowid = done.rowid
        if rowid is None:
            return
        self.records.invalidate(rowid)
        if self.review.stored is not None and self.review.rowid == rowid:
            # rebuilt, not only redrawn: a long-form judge may have added atomic facts
            self.open_record(rowid, self.sentences.cursor)

    def action_metrics_cycle(self) -> None:
        mode = self.query_one(MetricsBox).cycle()
        self.notify(f"metrics panel: {mode} (M: {_NEXT_MODE[mode]} next)")

    def action_toggle_turns(self) -> None:
        if not self.sentences.turns:
            self.notify("no earlier turns on this record")
            return
        shown = "unfolded" if self.sentences.toggle_turns() else "folded to one line each"
        self.notify(f"earlier turns {shown}")

    def action_metrics_scroll(self, lines: int) -> None:
        self.query_one(MetricsBox).scroll_lines(lines)

    def action_help(self) -> None:
        from .help import HelpScreen

        review = self.review
        self.app.push_screen(
            HelpScreen(
                frozenset(review.keys),
                review.family_names,
                editable=bool(review.editable),
                families=review.families,
            )
        )
