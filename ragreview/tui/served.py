"""The review app as one browser session of ``ragreview serve`` runs it.

textual-serve starts ``python -m ragreview.tui.served DB DATASET [--blind]`` per
browser connection, with the reviewer's name (from the sign-in page) in
``RAGREVIEW_REVIEWER``. The session leases the records it opens and keeps its lease
while the reviewer is active (docs/serve.md). It ends with the server, even one killed
with SIGKILL (services.serve_sessions), releasing its lease on the way out.
"""

from __future__ import annotations

import os
import sys
import time

from textual import events
from textual.screen import Screen

from ..core.reviewer_name import clean_reviewer
from ..services.serve_sessions import SERVER_PID_ENV, end_with_server, release_lease
from ..store import leases, open_database
from .app import RagreviewApp
from .others import OtherReviewers
from .screens.review import ReviewScreen

REVIEWER_ENV = "RAGREVIEW_REVIEWER"
RENEW_EVERY_S = 30.0  # well inside store.leases.LEASE_SECONDS


class ServedApp(RagreviewApp):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.others = OtherReviewers(self.review, lease=True)
        self._last_input = time.monotonic()
        self._renewed = time.monotonic()

    def get_default_screen(self) -> Screen:
        return ReviewScreen(self.review, self.others)

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(RENEW_EVERY_S, self._renew)

    async def on_event(self, event: events.Event) -> None:
        # A lease lapses when its reviewer goes idle: any key or click is activity.
        if isinstance(event, (events.Key, events.MouseDown)):
            self._last_input = time.monotonic()
        await super().on_event(event)

    def _renew(self) -> None:
        if self._last_input > self._renewed:
            self.others.renew()
            self._renewed = time.monotonic()

    def on_unmount(self) -> None:
        self.others.release()
        super().on_unmount()


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    db_path, dataset = args[0], args[1]
    reviewer = clean_reviewer(os.environ.get(REVIEWER_ENV, "")) or "reviewer"
    session = leases.process_session()  # names this process: see leases.release_dead
    server = os.environ.get(SERVER_PID_ENV, "")
    end_with_server(
        int(server) if server.isdigit() else None, lambda: release_lease(db_path, session)
    )
    db = open_database(db_path)
    try:
        ServedApp(db, dataset, reviewer, blind="--blind" in args[2:], session=session).run()
    finally:
        db.conn.close()
        # The app may end first when the server dies (its pipes close under it), before
        # the SIGTERM thread's release has run: let go here too (releasing is idempotent).
        release_lease(db_path, session)


if __name__ == "__main__":
    main()
