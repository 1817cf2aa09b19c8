"""The label history from the command line: undo, redo and log."""

from __future__ import annotations

import json

import click

from ..core.safe_text import json_for_terminal, printable
from ..store import history
from ..store import records as store_records
from . import cli
from .common import default_reviewer, user_errors
from .options import dataset_option, db_option, json_option, reviewer_option
from .session import open_target


def _step(path: str, reviewer: str | None, db: str | None, dataset: str | None, kind: str) -> None:
    with user_errors():
        opened = open_target(path, db, dataset)
        step = history.undo if kind == "undo" else history.redo
        event = step(opened.db, reviewer or default_reviewer(), dataset=opened.dataset)
    if event is None:
        raise click.ClickException(f"nothing to {kind}")
    shown = "the judge's value" if event.new is None else json.dumps(event.new)
    click.echo(
        printable(f"{kind}: {event.record} {event.name} {event.target} = {shown}", one_line=True)
    )


@cli.command()
@click.argument("path")
@reviewer_option
@db_option
@dataset_option
def undo(path: str, reviewer: str | None, db: str | None, dataset: str | None) -> None:
    """Undo the reviewer's latest label change."""
    _step(path, reviewer, db, dataset, "undo")


@cli.command()
@click.argument("path")
@reviewer_option
@db_option
@dataset_option
def redo(path: str, reviewer: str | None, db: str | None, dataset: str | None) -> None:
    """Redo the reviewer's latest undone change."""
    _step(path, reviewer, db, dataset, "redo")


@cli.command()
@click.argument("path")
@click.option("--record", "record_id", metavar="ID", help="Only this record's events.")
@click.option(
    "--errors", "judge_errors", is_flag=True, help="The judge's per-record errors instead."
)
@json_option
@db_option
@dataset_option
def log(
    path: str,
    record_id: str | None,
    judge_errors: bool,
    as_json: bool,
    db: str | None,
    dataset: str | None,
) -> None:
    """The append-only history of human changes, then the judge's unresolved errors.

    --json prints events only; --errors prints every judge error (resolved ones too),
    as JSON lines with "kind": "judge_error" under --json.
    """
    from ..store import event_reads
    from .judge import echo_judge_errors

    with user_errors():
        opened = open_target(path, db, dataset, read_only=True)
        rowid = (
            store_records.find(opened.db, record_id, opened.dataset).rowid if record_id else None
        )
        if judge_errors:
            echo_judge_errors(opened.db, opened.dataset, rowid, as_json, everything=True)
            return
        for event in event_reads.iter_events(opened.db, record=rowid):
            if event.dataset != opened.dataset:
                continue
            if as_json:
                click.echo(json_for_terminal(json.dumps(event.as_json(), ensure_ascii=False)))
            else:
                old = "–" if event.old is None else json.dumps(event.old, ensure_ascii=False)
                new = "–" if event.new is None else json.dumps(event.new, ensure_ascii=False)
                why = f"  ({event.reason})" if event.reason else ""
                why += f"  [rule {event.rule}]" if event.rule else ""
                line = (
                    f"{event.at}  {event.reviewer}  {event.kind:6}  {event.record}  "
                    f"{event.name} {event.target}: {old} → {new}{why}"
                )
                click.echo(printable(line, one_line=True))
        if not as_json:
            echo_judge_errors(opened.db, opened.dataset, rowid, False, everything=False)
