"""Options shared by several commands."""

from __future__ import annotations

import click

db_option = click.option(
    "--db", metavar="DB", help="Review database (default: <stem>.ragreview.db beside the input)."
)
dataset_option = click.option(
    "--dataset", metavar="NAME", help="Dataset inside the DB (default: the input's stem)."
)
reviewer_option = click.option(
    "--reviewer", metavar="NAME", help="Who is reviewing (default: $USER)."
)
json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
map_option = click.option(
    "--map",
    "map_spec",
    metavar="TARGET=PATH,…|FILE.toml",
    help="Read your own JSON Lines/CSV fields: e.g. question=query,response=answer,"
    "contexts=retrieved[].text (see `ragreview formats`).",
)
