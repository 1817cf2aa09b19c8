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

# The judge's endpoint, as `judge` and `align` both take it
base_url_option = click.option(
    "--base-url", metavar="URL", help="OpenAI-compatible endpoint (default: OpenAI)."
)
api_key_env_option = click.option(
    "--api-key-env",
    metavar="NAME",
    default="OPENAI_API_KEY",
    show_default=True,
    help="Environment variable holding the API key (never stored).",
)
concurrency_option = click.option(
    "--concurrency",
    type=click.IntRange(1, 256),
    default=4,
    show_default=True,
    help="Requests in flight at once.",
)
timeout_option = click.option(
    "--timeout",
    type=click.FloatRange(0.1),
    default=120.0,
    show_default=True,
    help="Seconds to wait for one reply.",
)
