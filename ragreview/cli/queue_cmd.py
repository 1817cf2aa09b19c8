"""``ragreview queue``: draw the next records to review, with recorded inclusion
probabilities, so the corrected headline number can weight them (docs/estimate.md)."""

from __future__ import annotations

import json

import click

from ..core import where
from ..core.errors import RagreviewError
from ..core.safe_text import json_for_terminal, printable
from ..services import queue_draws
from ..store import review_draws, review_queries
from . import cli
from .common import user_errors
from .options import dataset_option, db_option, json_option
from .session import open_target

target_option = click.option(
    "--target-halfwidth",
    type=float,
    metavar="H",
    help="Stopping rule: the 95 % interval half-width to reach "
    "(default: the dataset setting estimate.target_halfwidth).",
)


@cli.command()
@click.argument("path")
@click.option(
    "--strategy",
    type=click.Choice(queue_draws.STRATEGIES),
    help="What makes a record likelier to be drawn [default: random; sized by "
    "--target-halfwidth: the latest draw's].",
)
@click.option("--n", "n", type=int, help="Expected number of records to draw.")
@click.option(
    "--seed",
    type=int,
    help="Random seed [default: 0; sized by --target-halfwidth: the latest draw's].",
)
@target_option
@click.option(
    "--where",
    "where_expr",
    metavar="FILTER",
    help="List only the drawn records matching FILTER: field=value terms and words, as "
    "the review screen's / (model=gpt turn=3 judge.supported=false judge.fact=IR).",
)
@json_option
@db_option
@dataset_option
def queue(
    path: str,
    strategy: str | None,
    n: int | None,
    seed: int | None,
    target_halfwidth: float | None,
    where_expr: str | None,
    as_json: bool,
    db: str | None,
    dataset: str | None,
) -> None:
    """Draw records to review, weighted by a signal, each with its inclusion probability.

    Prints the drawn record ids in draw order (review them in that order). Without
    --n, --target-halfwidth draws as many as the current estimate needs to reach it,
    by default with the latest draw's strategy and seed: the same keys at a higher
    threshold, so the new draw starts with the old one and its reviews still count.
    With neither, prints the latest draw again.
    """
    if target_halfwidth is not None and not target_halfwidth > 0:
        raise click.UsageError("--target-halfwidth must be positive")
    query = None
    if where_expr is not None:
        try:
            query = where.parse(where_expr)
        except RagreviewError as err:
            raise click.UsageError(f"--where: {err}") from None
    with user_errors():
        opened = open_target(path, db, dataset)
        shown = None
        if n is None and target_halfwidth is None:
            shown = review_draws.latest(opened.db, opened.dataset)
            if shown is None or strategy is not None or seed is not None:
                raise click.UsageError("give --n, or --target-halfwidth to size the draw")
        if shown is not None:
            drawn, strategy, seed = shown, shown.strategy, shown.seed
        elif n is None:
            assert target_halfwidth is not None
            from ..services import estimates  # (only here: `queue --n` starts without them)
            from ..store import records as store_records

            block = estimates.dataset_estimates(opened.db, opened.dataset, target_halfwidth)
            needed = [  # the rates' rule, as the header's (docs/estimate.md)
                m["n_used"] + m["more_reviews"]
                for name, m in block["metrics"].items()
                if m["more_reviews"] is not None and name not in estimates.counted()
            ]
            if not needed:
                raise click.ClickException(
                    "no estimate yet (fewer than 2 reviewed records of a draw): give --n"
                )
            # never more than the dataset holds: at that size every record is drawn
            n = min(max(needed), sum(store_records.counts(opened.db, opened.dataset).values()))
            latest = review_draws.latest(opened.db, opened.dataset)
            if latest is not None:  # extend it (docs/estimate.md)
                strategy = strategy or latest.strategy
                seed = latest.seed if seed is None else seed
        if shown is None:
            strategy = strategy or "random"
            seed = 0 if seed is None else seed
            assert n is not None
            drawn = queue_draws.draw(opened.db, opened.dataset, strategy, n, seed)
        members = drawn.members
        if query is not None:  # the draw is the draw; the filter only picks what is listed
            from ..store import browse

            flt = browse.ListFilter(text=query.text, where=query.conditions)
            matching = set(browse.rowids(opened.db, opened.dataset, flt))
            members = tuple(m for m in members if m.record in matching)
        ids = review_queries.record_ids(opened.db, tuple(m.record for m in members))
    for rid, member in zip(ids, members):
        if as_json:
            line = {"id": rid, "order": member.position, "inclusion": member.inclusion}
            click.echo(json_for_terminal(json.dumps(line, ensure_ascii=False)))
        else:
            click.echo(printable(rid, one_line=True))
    matched = ""
    if query is not None:
        matched = f"; {len(ids)} of its {len(drawn.members)} match --where"
    click.echo(
        f"draw {drawn.id}: {len(drawn.members)} of {drawn.population} records ({strategy}, "
        f"seed {seed}, expected {drawn.n}){matched}; review them in this order",
        err=True,
    )
