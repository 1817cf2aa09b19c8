"""The review screen's background jobs: export and re-judge, each in a thread worker
on its own connection so the UI thread keeps committing labels meanwhile."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message
from textual.screen import Screen
from textual.worker import WorkerState

from ...core.errors import RagreviewError
from ...core.safe_text import printable
from ...store import browse

if TYPE_CHECKING:
    from ..model import Review


class ReviewJobs(Screen[None]):
    """The base of ``ReviewScreen``: starts the jobs. Workers never call into the
    screen: they post a ``JobDone`` message, which ``ReviewScreen`` handles."""

    class JobDone(Message):
        def __init__(
            self,
            message: str,
            severity: str,
            rowid: int | None = None,
            written: Path | None = None,
        ) -> None:
            self.message = message
            self.severity = severity
            self.rowid = rowid  # the record a re-judge changed
            self.written = written  # the file an export wrote (a browser gets a copy)
            super().__init__()

    def __init__(self, review: Review) -> None:
        super().__init__()
        self.review = review
        # keyword options for the re-judge call (tests shorten the retry back-off)
        self.rejudge_options: dict[str, Any] = {}

    def _busy(self, group: str, what: str) -> bool:
        """A job of ``group`` still runs: say so rather than start a second one (a thread
        cannot be cancelled, so two exports would write the same temp file)."""
        running = (WorkerState.PENDING, WorkerState.RUNNING)
        if any(w.group == group and w.state in running for w in self.workers):
            self.notify(f"{what} is still running", severity="warning")
            return True
        return False

    # -- export -----------------------------------------------------------------------

    def action_export(self) -> None:
        """Write the dataset in its source format beside the DB, off the UI thread."""
        from ...services import export

        if self._busy("export", "an export"):
            return
        path = browse.database_path(self.review.db)
        if not path:
            self.notify("export needs a database file", severity="error")
            return
        suffix = export.source_suffix(self.review.db, self.review.dataset)
        out = export.reviewed_path(path, self.review.dataset, suffix)
        self.notify(f"exporting to {out}…")  # App.notify shows it literally
        self._export(path, out)

    @work(thread=True, group="export")
    def _export(self, db_path: str, out: Path) -> None:
        from ...services import export
        from ...store import open_database

        db = open_database(db_path)  # its own connection: the UI keeps labelling meanwhile
        try:
            # the one export use case, with its guards (serve's browsers run this too);
            # force: pressing ctrl+e again replaces the previous export of that name (the
            # point of exporting again); the DB and the input files stay protected
            written = export.export(db, self.review.dataset, out, force=True)
        except RagreviewError as err:
            self.post_message(self.JobDone(str(err), "error"))
            return
        finally:
            db.conn.close()
        done = f"exported {written.count} records as {written.fmt} to {out}"
        self.post_message(self.JobDone(done, "information", written=out))

    # -- re-judge ---------------------------------------------------------------------

    def action_rejudge(self) -> None:
        """Prompt for the model (the last run's by default), then ask the judge again."""
        from ..rejudge import defaults
        from .prompt import PromptScreen  # (with the key: not on the first screen, issue 27)

        if self.review.stored is None or self._busy("rejudge", "a re-judge"):
            return
        rowid, record_id = self.review.rowid, self.review.stored.id
        base = defaults(self.review.db, self.review.dataset)

        def done(text: str | None) -> None:
            model = (text or "").strip()
            if text is None or not model:
                return
            self.notify(f"asking {model} about {record_id}…")
            self._rejudge(browse.database_path(self.review.db), rowid, model, base)

        endpoint = base.base_url or "the default endpoint ($OPENAI_BASE_URL)"
        self.app.push_screen(
            PromptScreen(
                printable(f"Re-judge {record_id}: model"),
                base.model,
                f"{endpoint}, task {base.task}",
            ),
            done,
        )

    @work(thread=True, group="rejudge")
    def _rejudge(self, db_path: str, rowid: int, model: str, base) -> None:
        from ...services.judge import JudgeAbort
        from ..rejudge import RejudgeFailed, rejudge

        try:
            message = rejudge(db_path, rowid, model, base, **self.rejudge_options)
        except (JudgeAbort, RejudgeFailed) as err:
            self.post_message(self.JobDone(str(err), "error", rowid))
        else:
            self.post_message(self.JobDone(message, "information", rowid))
