"""Label changes from the command line: label and mark (undo, redo and log are in
``history_cmd``, settings in ``settings_cmd``: a script of many label calls loads only
these two commands, issue 27)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..core.labels import parse_value_text
from ..core.safe_text import printable
from ..services import labels
from . import cli
from .common import default_reviewer, user_errors
from .options import dataset_option, db_option, reviewer_option
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
