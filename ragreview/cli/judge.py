"""`ragreview judge`: label records with any OpenAI-compatible model."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import sqlite_utils

from ..core.safe_text import json_for_terminal, printable
from ..store import judge_store
from . import cli
from .common import counting_bar, progress_enabled, user_errors
from .options import (
    api_key_env_option,
    base_url_option,
    concurrency_option,
    dataset_option,
    db_option,
    timeout_option,
)
from .session import open_target

TASK_CHOICES = ("auto", "trace", "idk", "rgb", "facts")


@cli.command()
@click.argument("path")
@click.option("--model", metavar="M", help="Model name, as the endpoint knows it.")
@base_url_option
@click.option(
    "--task",
    type=click.Choice(TASK_CHOICES),
    default="auto",
    show_default=True,
    help="What to label; auto follows each record's own task.",
)
@click.option(
    "--prompt",
    "prompt_file",
    type=click.Path(exists=True, dir_okay=False),
    help="Replace the task's prompt template with this file.",
)
@concurrency_option
@api_key_env_option
@click.option("--price-in", type=float, default=0.0, help="Price per million prompt tokens.")
@click.option("--price-out", type=float, default=0.0, help="Price per million completion tokens.")
@click.option(
    "--max-retries",
    type=click.IntRange(0, 50),
    default=5,
    show_default=True,
    help="Retries per request (429, 5xx, timeouts) and per malformed reply.",
)
@timeout_option
@click.option("--dry-run", is_flag=True, help="Print the prompts; call nothing.")
@click.option(
    "--only-missing",
    is_flag=True,
    help="Skip records that already carry judge labels for the task.",
)
@click.option("--batch", "use_batch", is_flag=True, help="Submit through the Batch API.")
@click.option(
    "--collect",
    "collect",
    is_flag=False,
    flag_value="-",
    default=None,
    metavar="[FILE]",
    help="Collect finished Batch API jobs; with FILE, from a local Batch output file "
    "(e.g. written by `vllm run-batch`).",
)
@click.option(
    "--logprobs",
    is_flag=True,
    help="Ask for token log-probabilities and store each verdict's (when the endpoint gives them).",
)
@click.option("--no-cache", is_flag=True, help="Ask the model even when a reply is cached.")
@click.option(
    "--repeat",
    type=click.IntRange(1, 10),
    default=1,
    show_default=True,
    help="Judge the records this many times with the same prompt (one run each; the "
    "repeats bypass the cache): `agreement --runs` shows the judge-vs-itself κ.",
)
@db_option
@dataset_option
def judge(
    path: str,
    model: str | None,
    base_url: str | None,
    task: str,
    prompt_file: str | None,
    concurrency: int,
    api_key_env: str,
    price_in: float,
    price_out: float,
    max_retries: int,
    timeout: float,
    dry_run: bool,
    only_missing: bool,
    use_batch: bool,
    collect: str | None,
    logprobs: bool,
    no_cache: bool,
    repeat: int,
    db: str | None,
    dataset: str | None,
) -> None:
    """Label the records of PATH with an LLM judge (only the judge layer is written).

    The key is read from $OPENAI_API_KEY (or --api-key-env NAME). Replies are cached in
    the DB, so running again, or after Ctrl-C, repeats no finished call.
    """
    from ..services.judge import JudgeAbort, JudgeConfig

    if use_batch and collect:
        raise click.UsageError("give --batch or --collect, not both")
    if not model and not collect:
        raise click.UsageError("--model is required")
    if repeat > 1 and (use_batch or collect or dry_run or only_missing):
        raise click.UsageError(
            "--repeat judges every record again online: not with --batch, --collect, "
            "--dry-run or --only-missing"
        )
    if prompt_file and task == "auto":
        raise click.UsageError("--prompt replaces one task's prompt: give --task too")
    templates = {task: Path(prompt_file).read_text("utf-8")} if prompt_file else {}
    config = JudgeConfig(
        model=model or "",
        # the openai client falls back to $OPENAI_BASE_URL: record what is really used
        base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
        api_key_env=api_key_env,
        task=task,
        concurrency=concurrency,
        max_retries=max_retries,
        timeout=timeout,
        templates=templates,
        only_missing=only_missing,
        use_cache=not no_cache,
        price_in=price_in,
        price_out=price_out,
        logprobs=logprobs,
    )
    with user_errors():
        opened = open_target(path, db, dataset)
        try:
            # Ctrl-C: finished records are already committed; say how to resume
            if dry_run:
                _dry_run(opened.db, opened.dataset, config)
            elif collect:
                _collect(opened.db, opened.dataset, config, path, collect)
            elif use_batch:
                _submit(opened.db, opened.dataset, config)
            else:
                _online(opened.db, opened.dataset, config, path, repeat)
        except JudgeAbort as err:
            raise click.ClickException(str(err)) from None
        except KeyboardInterrupt:
            click.echo(
                "interrupted: finished records are saved; run the same command again to "
                "resume (answered prompts come from the cache)",
                err=True,
            )
            raise SystemExit(130) from None


def _dry_run(db: sqlite_utils.Database, dataset: str, config) -> None:
    from ..services.judge.runner import plan

    for job in plan(db, dataset, config):
        click.echo(printable(f"=== {job.record.id} ({job.task.name}) ===", one_line=True))
        click.echo(printable(job.prompt))


def _summary(stats, config) -> str:
    cost = f"; est. cost ${stats.cost(config):.4f}" if (config.price_in or config.price_out) else ""
    return (
        f"{stats.labelled} labelled ({stats.cached} from cache), {stats.errors} errors, "
        f"{stats.skipped} skipped; {stats.requests} requests; "
        f"tokens {stats.prompt_tokens} in / {stats.completion_tokens} out{cost}"
        + (f"; {stats.retry_summary()}" if stats.retries else "")
    )


@contextmanager
def _progress_bar(total: int, config) -> Iterator[tuple[Callable, Callable]]:
    """(update, waiting): a bar with tokens and cost on a terminal, where a long wait
    before a retry shows in the bar; when piped, no bar and each long wait is a line."""
    if not progress_enabled():

        def say(seconds: float, why: str) -> None:
            click.echo(printable(f"waiting {seconds:.0f} s before a retry ({why})"), err=True)

        yield (lambda stats: None), say
        return
    with counting_bar("{task.fields[usage]}") as bar:
        task = bar.add_task("judging", total=total, usage="")
        stats_seen: list = []  # the run's Stats, once the first record reported

        def update(stats) -> None:
            if not stats_seen:
                stats_seen.append(stats)
            usage = f"{stats.prompt_tokens + stats.completion_tokens} tokens"
            if config.price_in or config.price_out:
                usage += f" ${stats.cost(config):.4f}"
            if stats.errors:
                usage += f" {stats.errors} errors"
            if stats.retries:  # a 429 or a 500 the run got past: still worth seeing
                usage += f" {stats.retry_summary()}"
            # (replaces a wait shown by ``waiting``: a record finished since)
            bar.update(task, completed=stats.done + stats.skipped, usage=usage)

        def waiting(seconds: float, why: str) -> None:
            shown = printable(f"waiting {seconds:.0f} s ({why})", one_line=True)
            if stats_seen and stats_seen[-1].retries:
                shown += f" · {stats_seen[-1].retry_summary()}"
            bar.update(task, usage=shown)

        yield update, waiting


def _online(db: sqlite_utils.Database, dataset: str, config, path: str, repeat: int = 1) -> None:
    from ..services.judge.repeat import keep_first_active, repeat_config
    from ..services.judge.runner import count_records, run

    first = None
    errors = 0
    for _ in range(repeat):
        this = config if first is None else repeat_config(config, first)
        with _progress_bar(count_records(db, dataset), config) as (update, waiting):
            run_id, stats = run(db, dataset, this, on_progress=update, on_wait=waiting)
        what = "run" if first is None else f"repeat of {first}:"
        click.echo(printable(f"{what} {run_id} ({config.model}): {_summary(stats, config)}"))
        first = first or run_id
        errors += stats.errors
    if repeat > 1 and first is not None:
        keep_first_active(db, dataset, first)
        click.echo(printable(f"run {first} stays the active judge layer"))
    if errors:
        click.echo(f"see the errors with: ragreview log {path} --errors", err=True)
        raise click.ClickException(f"{errors} records could not be labelled")


def _submit(db: sqlite_utils.Database, dataset: str, config) -> None:
    from ..services.judge.batch import submit

    run_id, stats, reports = submit(db, dataset, config)
    for report in reports:
        click.echo(printable(f"batch {report.id}: {report.status}, {report.requests} requests"))
    click.echo(f"run {run_id} ({config.model}): {_summary(stats, config)}")
    if reports:
        click.echo("collect the results later with: ragreview judge PATH --collect", err=True)


def _collect(db: sqlite_utils.Database, dataset: str, config, path: str, source: str) -> None:
    from ..services.judge.batch import collect, collect_file

    if source == "-":
        stats, reports = collect(db, dataset, config)
    else:
        if not Path(source).is_file():
            raise click.ClickException(f"{source}: no such file")
        stats, reports, problems = collect_file(db, dataset, Path(source), config)
        for problem in problems:
            click.echo(printable(f"warning: {problem}", one_line=True), err=True)
    if not reports:
        click.echo("no batch is waiting to be collected")
        return
    for report in reports:
        done = f", {report.labelled} labelled, {report.errors} errors" if report.requests else ""
        click.echo(printable(f"batch {report.id}: {report.status}{done}"))
    errors = sum(report.errors for report in reports)
    if errors:
        click.echo(f"see the errors with: ragreview log {path} --errors", err=True)
        raise click.ClickException(f"{errors} records could not be labelled")


def echo_judge_errors(
    db: sqlite_utils.Database, dataset: str, record: int | None, as_json: bool, everything: bool
) -> None:
    """The judge's per-record errors, for `ragreview log` (unresolved ones unless
    ``everything``). JSON lines carry ``"kind": "judge_error"``."""
    errors = judge_store.iter_errors(db, dataset=dataset, record=record, unresolved=not everything)
    for err in errors:
        if as_json:
            click.echo(json_for_terminal(json.dumps(err.as_json(), ensure_ascii=False)))
        else:
            fixed = f"  (resolved by run {err.resolved})" if err.resolved else ""
            line = (
                f"{err.at}  judge {err.model}  {err.task:6}  {err.record}  "
                f"run {err.run}: {err.message}{fixed}"
            )
            click.echo(printable(line, one_line=True))
