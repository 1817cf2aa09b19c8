"""Label changes from the command line: label, mark, undo, redo, log, settings."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..core.labels import parse_value_text
from ..core.safe_text import json_for_terminal, printable
from ..services import labels
from ..services import settings as settings_service
from ..store import history
from ..store import records as store_records
from . import cli
from .common import default_reviewer, progress, user_errors
from .options import dataset_option, db_option, json_option, reviewer_option
from .session import open_target


@cli.command()
@click.argument("path")
@click.argument("record_id", required=False)
@click.argument("name", required=False)
@click.argument("target", required=False)
@click.argument("value", required=False)
@reviewer_option
@click.option("--reason", metavar="TEXT", help="Why the label changes (kept in the log).")
@click.option(
    "--from",
    "from_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Apply every change in FILE (CSV or JSON Lines: record_id, name, target, "
    "value, optional reason) instead of one from the arguments.",
)
@click.option("--rule", metavar="ID", help="The guideline rule the change applies (e.g. R3).")
@db_option
@dataset_option
def label(
    path: str,
    record_id: str | None,
    name: str | None,
    target: str | None,
    value: str | None,
    reviewer: str | None,
    reason: str | None,
    from_file: Path | None,
    rule: str | None,
    db: str | None,
    dataset: str | None,
) -> None:
    """Override one label: NAME on TARGET ('*' for the record) becomes VALUE.

    VALUE is JSON (true, 0.5, "NS", ["0a","0b"]) or a bare word (NS, UNANSWERABLE);
    'judge' reverts to the judge's label. With --from FILE, every line of FILE is one
    such change (README, Commands); bad lines are reported as FILE:LINE: field and skipped.
    """
    given = [a for a in (record_id, name, target, value) if a is not None]
    if from_file is not None:
        if given or reason is not None or rule is not None:
            raise click.UsageError(
                "--from FILE takes no RECORD_ID NAME TARGET VALUE, --reason or --rule"
            )
        _label_from(path, from_file, reviewer, db, dataset)
        return
    if len(given) < 4:
        raise click.UsageError("give RECORD_ID NAME TARGET VALUE, or --from FILE")
    assert record_id is not None and name is not None and target is not None
    assert value is not None
    with user_errors():
        opened = open_target(path, db, dataset)
        parsed = None if value == "judge" else parse_value_text(value)
        event = labels.label(
            opened.db,
            opened.dataset,
            record_id,
            name,
            target,
            parsed,
            reviewer or default_reviewer(),
            reason=reason,
            rule=rule,
        )
    shown = "the judge's value" if parsed is None else json.dumps(parsed)
    line = f"{record_id} {name} {target} = {shown}" + ("" if event else " (unchanged)")
    click.echo(printable(line, one_line=True))


def _label_from(
    path: str, from_file: Path, reviewer: str | None, db: str | None, dataset: str | None
) -> None:
    from ..core.errors import InputError
    from . import label_file

    applied = unchanged = 0
    errors: list[InputError] = []
    with user_errors():
        opened = open_target(path, db, dataset)
        who = reviewer or default_reviewer()
        for change in label_file.read_changes(from_file):
            if isinstance(change, InputError):
                errors.append(change)
                continue
            try:
                event = label_file.apply(opened.db, opened.dataset, from_file, change, who)
            except InputError as err:
                errors.append(err)
                continue
            if event is None:
                unchanged += 1
            else:
                applied += 1
    for bad in errors[:20]:
        click.echo(printable(f"error: {bad}", one_line=True), err=True)
    if len(errors) > 20:
        click.echo(f"… and {len(errors) - 20} more errors", err=True)
    click.echo(f"{applied} labels changed, {unchanged} unchanged, {len(errors)} bad lines")
    if errors:
        raise SystemExit(1)


@cli.command()
@click.argument("path")
@click.argument("record_id")
@click.option("--reviewed/--unreviewed", default=None, help="The record's review status.")
@reviewer_option
@db_option
@dataset_option
def mark(
    path: str,
    record_id: str,
    reviewed: bool | None,
    reviewer: str | None,
    db: str | None,
    dataset: str | None,
) -> None:
    """Mark a record reviewed or unreviewed."""
    if reviewed is None:
        raise click.UsageError("give --reviewed or --unreviewed")
    with user_errors():
        opened = open_target(path, db, dataset)
        status = labels.mark(
            opened.db, opened.dataset, record_id, reviewed, reviewer or default_reviewer()
        )
    click.echo(printable(f"{record_id}: {status}", one_line=True))


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


@cli.command()
@click.argument("path")
@click.argument("assignments", nargs=-1, metavar="[NAME=VALUE ...]")
@db_option
@dataset_option
def settings(path: str, assignments: tuple[str, ...], db: str | None, dataset: str | None) -> None:
    """Show or change the dataset's settings (e.g. trace.variant=length longform.k=64)."""
    with user_errors():
        opened = open_target(path, db, dataset)
        for assignment in assignments:
            name, sep, value = assignment.partition("=")
            if not sep:
                raise click.UsageError(f"expected NAME=VALUE, got {assignment!r}")
            total = store_records.counts(opened.db, opened.dataset)
            with progress(f"recomputing metrics for {name.strip()}", sum(total.values())) as step:
                settings_service.change(
                    opened.db,
                    opened.dataset,
                    name.strip(),
                    parse_value_text(value.strip()),
                    on_progress=step,
                )
        every = settings_service.current(opened.db, opened.dataset)
        for name, value in every.items():
            shown = json.dumps(value) if not isinstance(value, str) else value
            click.echo(printable(f"{name}={shown}", one_line=True))
