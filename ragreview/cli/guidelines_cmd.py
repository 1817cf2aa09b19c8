"""``ragreview guidelines``: a dataset's guidelines and their rules (docs/align.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..core.safe_text import json_for_terminal, printable
from . import cli
from .common import user_errors
from .options import dataset_option, db_option, json_option
from .session import open_target


@cli.command()
@click.argument("path")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False))
@json_option
@db_option
@dataset_option
def guidelines(
    path: str, file: str | None, as_json: bool, db: str | None, dataset: str | None
) -> None:
    """Attach FILE (Markdown; rules with ids such as R3) as the dataset's guidelines,
    or, without FILE, list their rules. Corrections name a rule with
    `ragreview label … --rule R3`."""
    from ..core.guidelines import parse_rules
    from ..store import guidelines as store_guidelines

    with user_errors():
        opened = open_target(path, db, dataset, read_only=file is None)
        if file is not None:
            try:
                text = Path(file).read_text("utf-8")
            except UnicodeDecodeError as err:
                raise click.ClickException(f"{file}: not UTF-8 text ({err.reason})") from None
            store_guidelines.store(opened.db, opened.dataset, text, str(Path(file).resolve()))
            rules = parse_rules(text)
            shown = ", ".join(rules) or "none"
            click.echo(printable(f"guidelines of {opened.dataset}: {len(rules)} rules ({shown})"))
            return
        rules = store_guidelines.rules(opened.db, opened.dataset)
        if as_json:
            click.echo(json_for_terminal(json.dumps(rules, ensure_ascii=False)))
            return
        if store_guidelines.text(opened.db, opened.dataset) is None:
            click.echo("no guidelines: attach them with `ragreview guidelines PATH FILE`", err=True)
            return
        for rule_id, text in rules.items():
            click.echo(printable(f"{rule_id}  {text}", one_line=True))
