"""``ragreview align``: a candidate judge from the reviewer's corrections (docs/align.md)."""

from __future__ import annotations

import os

import click

from ..core.safe_text import printable
from . import cli
from .common import user_errors
from .options import (
    api_key_env_option,
    base_url_option,
    concurrency_option,
    dataset_option,
    db_option,
    timeout_option,
)
from .session import open_target


@cli.command()
@click.argument("path")
@click.option(
    "--task",
    required=True,
    type=click.Choice(("trace", "idk", "rgb", "facts")),
    help="The judge task whose corrections become examples.",
)
@click.option("--model", required=True, metavar="M", help="Model name, as the endpoint knows it.")
@base_url_option
@click.option("--folds", type=click.IntRange(2, 100), default=5, show_default=True)
@click.option(
    "--examples",
    type=click.IntRange(1, 200),
    default=8,
    show_default=True,
    help="At most this many corrections in each fold's prompt.",
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option(
    "--prompt",
    "prompt_file",
    type=click.Path(exists=True, dir_okay=False),
    help="The task's prompt template to start from (default: the shipped one).",
)
@concurrency_option
@api_key_env_option
@timeout_option
@db_option
@dataset_option
def align(
    path: str,
    task: str,
    model: str,
    base_url: str | None,
    folds: int,
    examples: int,
    seed: int,
    prompt_file: str | None,
    concurrency: int,
    api_key_env: str,
    timeout: float,
    db: str | None,
    dataset: str | None,
) -> None:
    """Judge the reviewed records again with few-shot examples from the corrections.

    The records are split into --folds folds; each fold's prompt carries corrections
    from the other folds only, so no record sees its own correction. The result is a
    new judge run (the active one stays active): compare it with `ragreview agreement
    PATH --runs`.
    """
    from pathlib import Path

    from ..services.judge import JudgeAbort, JudgeConfig
    from ..services.judge.align import run

    templates = {task: Path(prompt_file).read_text("utf-8")} if prompt_file else {}
    config = JudgeConfig(
        model=model,
        base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
        api_key_env=api_key_env,
        task=task,
        concurrency=concurrency,
        timeout=timeout,
        templates=templates,
    )
    with user_errors():
        opened = open_target(path, db, dataset)
        try:
            run_id, stats, plan = run(
                opened.db, opened.dataset, config, folds=folds, examples=examples, seed=seed
            )
        except JudgeAbort as err:
            raise click.ClickException(str(err)) from None
    shown = sum(len(got) for got in plan.examples.values())
    click.echo(
        printable(
            f"align run {run_id} ({model}): {stats.labelled} records judged in {folds} folds "
            f"({shown} examples shown in all), {stats.errors} errors; "
            f"compare: ragreview agreement {path} --runs",
            one_line=True,
        )
    )
    if stats.errors:
        raise click.ClickException(f"{stats.errors} records could not be labelled")
