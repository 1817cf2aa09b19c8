"""The review app: a tiny App that opens the review screen on a dataset."""

from __future__ import annotations

import gc
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING

from textual.app import App, SystemCommand
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from ..core.safe_text import printable
from ..store import browse
from ..store.db import checkpoint, checkpoint_in_background, checkpoint_now
from .actions import ACTIONS
from .model import Review
from .screens.review import ReviewScreen

if TYPE_CHECKING:  # (the handle open_database gives needs no sqlite-utils: issue 27, start-up)
    import sqlite_utils

CHECKPOINT_EVERY_S = 2.0


class RagreviewApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "ragreview"
    panel_mode = "compact"  # the metrics panel's first mode (`M` steps it)

    def __init__(
        self,
        db: sqlite_utils.Database,
        dataset: str,
        reviewer: str,
        *,
        blind: bool = False,
        session: str | None = None,
    ) -> None:
        super().__init__()
        self.review = Review(db, dataset, reviewer, blind=blind, session=session)
        self._db_path = ""
        self._collecting = gc.isenabled()

    def on_load(self) -> None:
        # No cyclic collection until the first screen is drawn: startup builds styles,
        # widgets and records that live as long as the app, and full collections that
        # rescanned them cost 30-90 ms each, during startup and on the first keypresses
        # (issue 27). `_startup_drawn` turns it back on.
        self._collecting = gc.isenabled()
        gc.disable()

    def on_mount(self) -> None:
        # Checkpoints move WAL pages into the 100k-record DB file and can take 100 ms;
        # do them off the UI thread so a keypress never waits behind one.
        self._db_path = browse.database_path(self.review.db)
        if self._db_path:
            checkpoint_in_background(self.review.db)
            self.set_interval(CHECKPOINT_EVERY_S, self._checkpoint)
        self.call_after_refresh(self._startup_drawn)

    def _startup_drawn(self) -> None:
        # Freeze, not collect: what startup made (modules, styles, the first screen's
        # widgets) moves out of the collector's generations, so no later collection
        # rescans it; a collection here took 60-150 ms and landed on a keypress. The
        # little cyclic garbage of startup stays until the app closes (on_unmount).
        gc.freeze()
        if self._collecting:
            gc.enable()

    def _checkpoint(self) -> None:
        self.run_worker(
            partial(checkpoint, self._db_path), thread=True, exclusive=True, group="checkpoint"
        )

    def on_unmount(self) -> None:
        if self._db_path:  # leave the file compact for other tools
            checkpoint_now(self.review.db)
        # what startup froze is collectable again (apps run one after another in tests)
        gc.unfreeze()
        if self._collecting:
            gc.enable()

    def get_default_screen(self) -> Screen:
        return ReviewScreen(self.review)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, ReviewScreen):
            for action in ACTIONS:  # label commands only where the open record takes them
                if screen.applicable(action):
                    yield SystemCommand(
                        action.palette_title, action.help, partial(screen.run_action, action.action)
                    )
            yield SystemCommand(
                "view: Leave blind mode", "Show judge labels on every record.", screen.leave_blind
            )

    def notify(self, message: str, *, title: str = "", severity="information", **kwargs) -> None:
        """Kept as notifications (``ragreview`` tests read them) and shown on the review
        screen's status line; toasts are hidden so they never cover the metrics panel.
        Messages quote ids, paths and server replies: shown literally (no markup, no
        escape sequences), whatever the caller passed."""
        message = printable(message)
        kwargs["markup"] = False
        super().notify(message, title=title, severity=severity, **kwargs)
        for screen in self.screen_stack:
            if isinstance(screen, ReviewScreen) and screen.is_mounted:
                screen.say(message, severity)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place background failures (export) reach the reviewer."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.notify(f"{event.worker.name}: {event.worker.error}", severity="error")


def run(db: sqlite_utils.Database, dataset: str, reviewer: str, blind: bool = False) -> None:
    # (`ragreview open` closes the DB when the command ends: cli.session.open_target)
    RagreviewApp(db, dataset, reviewer, blind=blind).run()
