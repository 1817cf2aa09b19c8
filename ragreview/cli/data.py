"""``ragreview import`` and ``ragreview export``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from .. import formats
from ..core.safe_text import printable
from ..formats import catalogue, mapped
from ..services import export, opening
from . import cli
from .common import progress, resolve, user_errors
from .options import dataset_option, db_option, json_option, map_option
from .session import import_target, open_target, report_errors


@cli.command("import")
@click.argument("path")
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(formats.names()),
    help="Input format (default: detected from the content).",
)
@dataset_option
@click.option("--strict", is_flag=True, help="Import nothing if any record is invalid.")
@map_option
def import_cmd(
    path: str,
    db: str | None,
    fmt: str | None,
    dataset: str | None,
    strict: bool,
    map_spec: str | None,
) -> None:
    """Import (or re-import) an evaluation file into its review database."""
    # (here, not at the top: ``export`` in this module needs no import machinery, whose
    # modules and multiprocessing were ~25 ms of its start-up, issue 27)
    from ..services.importing import invalid_count

    with user_errors():
        mapping = None if map_spec is None else mapped.parse_spec(map_spec)
        target = resolve(path, db, dataset)
        if target.input_path is None:
            raise click.ClickException(f"{path}: give an input file to import, not a database")
        assert target.dataset is not None
        # Read (and under --strict validate) before the DB is even created: a file that
        # cannot be read, or any bad record under --strict, leaves nothing behind. The
        # records then stream into the DB without being held in memory.
        try:
            _db, summary, errors = import_target(target, fmt, mapping, strict=strict)
        except opening.StrictRefusal as refusal:
            report_errors(refusal.errors)
            raise click.ClickException(
                f"{invalid_count(len(refusal.errors))}; nothing imported (--strict)"
            ) from None
        report_errors(errors)
    stale = f", {summary.stale} now stale" if summary.stale else ""
    line = (
        f"{target.db_path}: dataset {target.dataset!r}: {summary.inserted} new, "
        f"{summary.updated} changed{stale}, {summary.unchanged} unchanged"
    )
    click.echo(printable(line, one_line=True), err=True)
    if errors:
        were = "was" if len(errors) == 1 else "were"
        raise click.ClickException(f"{invalid_count(len(errors))} {were} skipped")


@cli.command("export")
@click.argument("path")
@click.option(
    "--out", "out_path", required=True, metavar="FILE", help="Output file ('-' for stdout)."
)
@click.option(
    "--as",
    "as_",
    type=click.Choice(export.AS_CHOICES),
    default="source",
    show_default=True,
    help="Output format.",
)
@click.option("--reviewed-only", is_flag=True, help="Only records marked reviewed.")
@click.option(
    "--allow-loss",
    is_flag=True,
    help="Write the source format even where it cannot hold some reviewed labels.",
)
@click.option("--force", is_flag=True, help="Replace FILE if it exists.")
@db_option
@dataset_option
def export_cmd(
    path: str,
    out_path: str,
    as_: str,
    reviewed_only: bool,
    allow_loss: bool,
    force: bool,
    db: str | None,
    dataset: str | None,
) -> None:
    """Write the corrected records out.

    FILE is written under a temporary name and renamed into place when complete. It is
    never the review database or an input file; an existing FILE needs --force.
    """
    with user_errors():
        opened = open_target(path, db, dataset, read_only=True)
        inputs = [p for p in (opened.target.input_path,) if p is not None]
        if as_ == catalogue.PARQUET and out_path == "-":  # a binary file, written by path
            raise click.ClickException(f"--as {catalogue.PARQUET} needs a file for --out")
        total = export.total(opened.db, opened.dataset)
        with progress(f"exporting {opened.dataset}", total) as advance:
            options: dict[str, Any] = {
                "as_": as_,
                "reviewed_only": reviewed_only,
                "allow_loss": allow_loss,
                "inputs": inputs,
                "on_record": lambda: advance(1),
            }
            if out_path == "-":
                done = export.export_stream(opened.db, opened.dataset, sys.stdout, **options)
            else:
                done = export.export(
                    opened.db, opened.dataset, Path(out_path), force=force, **options
                )
    if done.dropped:
        left_out = f"left out (--allow-loss): {export.describe_loss(done.dropped)}"
        click.echo(printable(left_out, one_line=True), err=True)
    click.echo(printable(f"wrote {done.count} {done.what} to {out_path} as {done.fmt}"), err=True)


@cli.command("formats")
@json_option
def formats_cmd(as_json: bool) -> None:
    """The input formats: how each is detected and the fields it needs."""
    rows = catalogue.rows()
    if as_json:
        for row in rows:
            click.echo(json.dumps(row, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Input formats (detected by content; --format to choose)")
    for column in ("format", "detected by", "needs (any one line)", "reads"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["format"], row["detected_by"], "\n".join(row["needs"]), row["reads"])
    Console().print(table)
    click.echo(
        "Parquet files and datasets.save_to_disk directories hold the rows of any row "
        "format. Your own JSON Lines or CSV: --map target=path,… (docs/formats.md)."
    )
