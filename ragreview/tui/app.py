"""The review app: a tiny App that opens the review screen on a dataset."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

import sqlite_utils
from textual.app import App, SystemCommand
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from .actions import ACTIONS
from .model import Review
from .screens.review import ReviewScreen


class RagreviewApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "ragreview"

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

    def get_default_screen(self) -> Screen:
        return ReviewScreen(self.review)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, ReviewScreen):
            for action in ACTIONS:
                yield SystemCommand(
                    action.palette_title, action.help, partial(screen.run_action, action.action)
                )
            yield SystemCommand(
                "view: Leave blind mode", "Show judge labels on every record.", screen.leave_blind
            )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place background failures (export) reach the reviewer."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.notify(f"{event.worker.name}: {event.worker.error}", severity="error")


def run(db: sqlite_utils.Database, dataset: str, reviewer: str, blind: bool = False) -> None:
    RagreviewApp(db, dataset, reviewer, blind=blind).run()
