"""The palette's "judge: Re-judge this record": one blocking judge call, made in a thread
worker on its own connection (the UI thread's connection stays free for labels)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..store import judge_store

if TYPE_CHECKING:  # sqlite_utils imports click; the model needs no CLI
    import sqlite_utils


@dataclass(frozen=True)
class Defaults:
    """What the dataset's latest judge run used: the prompt's default model, and the
    endpoint and task the call reuses."""

    model: str
    base_url: str | None
    task: str


def defaults(db: sqlite_utils.Database, dataset: str) -> Defaults:
    run: dict[str, Any] | None = judge_store.last_run(db, dataset)
    if run is None:
        return Defaults("", None, "auto")
    return Defaults(run["model"], run["base_url"], run["task"] or "auto")


def rejudge(db_path: str, rowid: int, model: str, base: Defaults, **options: Any) -> str:
    """Judge record ``rowid`` again; a one-line outcome. Raises ``JudgeAbort`` (bad key,
    no task fits, endpoint refused) with a one-line message."""
    from ..services.judge import rejudge_record
    from ..store import open_database

    db = open_database(db_path)
    try:
        _run, stats = rejudge_record(db, rowid, model, base.base_url, base.task, **options)
        retried = f" after {stats.retry_summary()}" if stats.retries else ""
        if stats.errors:
            errors = judge_store.iter_errors(db, record=rowid, unresolved=True)
            why = errors[-1].message if errors else "see ragreview log"
            raise RejudgeFailed(f"the judge gave no labels{retried}: {why}")
        return f"re-judged with {model}{retried}"
    finally:
        db.conn.close()


class RejudgeFailed(Exception):
    """The call went through but the record got no labels (the error is stored)."""
