"""``ragreview runs``: the judge runs kept as layers, and which one is active."""

from __future__ import annotations

import json
from typing import Any

import click

from ..core.safe_text import json_for_terminal, printable
from ..store import records as store_records
from ..store import run_layers
from . import cli
from .common import progress, user_errors
from .options import dataset_option, db_option, json_option
from .session import open_target


class _RunsGroup(click.Group):
    """``runs PATH`` lists (the ``list`` subcommand is implied); ``runs use PATH ID``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["list", *args]
        return super().parse_args(ctx, args)


@cli.group(cls=_RunsGroup)
def runs() -> None:
    """The dataset's judge runs (imported labels, `ragreview judge`, re-judged records).

    Each run keeps its labels; one is active: the judge layer that metrics, the TUI and
    exports use. `ragreview runs PATH` lists them; `ragreview runs use PATH ID` switches.
    """


def _params(params: dict[str, Any]) -> str:
    return " ".join(f"{k}={json.dumps(v)}" for k, v in params.items() if v not in (None, False))


@runs.command("list")
@click.argument("path")
@json_option
@db_option
@dataset_option
def list_runs(path: str, as_json: bool, db: str | None, dataset: str | None) -> None:
    """List the runs: id, model, prompt hash, parameters, time, labels, active mark."""
    with user_errors():
        opened = open_target(path, db, dataset, read_only=True)
        found = run_layers.runs(opened.db, opened.dataset)
    for run in found:
        if as_json:
            click.echo(json_for_terminal(json.dumps(run, ensure_ascii=False)))
            continue
        mark = "*" if run["active"] else " "
        prompt = (run["prompt_hash"] or "-")[:12]
        line = (
            f"{mark} {run['id']}  {run['model']}  {run['mode']}  prompt {prompt}  "
            f"{run['started'][:19]}  {run['labels']} labels on {run['records']} records"
            + (f" ({run['logprobs']} with logprob)" if run["logprobs"] else "")
            + (f"  {_params(run['params'])}" if run["params"] else "")
        )
        click.echo(printable(line, one_line=True))
    if not as_json:
        click.echo(f"{len(found)} runs (* active)", err=True)


@runs.command("use")
@click.argument("path")
@click.argument("run_id", metavar="ID")
@db_option
@dataset_option
def use(path: str, run_id: str, db: str | None, dataset: str | None) -> None:
    """Make run ID (or a unique prefix of it) the active judge layer; every metric
    follows. The human labels and their history are not touched."""
    with user_errors():
        opened = open_target(path, db, dataset)
        chosen = run_layers.resolve(opened.db, opened.dataset, run_id)
        total = sum(store_records.counts(opened.db, opened.dataset).values())
        with progress("rebuilding the judge layer", total) as step:
            changed = run_layers.use(opened.db, opened.dataset, chosen, on_progress=step)
    what = "is now" if changed else "was already"
    click.echo(printable(f"run {chosen} {what} the active judge layer", one_line=True))


def _num(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def print_runs_report(
    path: str,
    db: str | None,
    dataset: str | None,
    as_json: bool,
    seed: int,
    resamples: int,
    all_reviewed: bool,
    base: str | None = None,
    candidate: str | None = None,
) -> None:
    """``agreement --runs``: one table of every run against the same human labels,
    then the paired comparison of two runs and each repeat's self-agreement."""
    from ..services import run_compare, run_report

    with user_errors():
        opened = open_target(path, db, dataset, read_only=True)
        report = run_report.build(
            opened.db, opened.dataset, seed=seed, resamples=resamples, all_reviewed=all_reviewed
        )
        run_compare.extend(
            report,
            opened.db,
            opened.dataset,
            base=base,
            candidate=candidate,
            seed=seed,
            resamples=resamples,
            all_reviewed=all_reviewed,
        )
    if as_json:
        click.echo(json_for_terminal(json.dumps(report, ensure_ascii=False)))
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(markup=False, highlight=False)
    click.echo(f"{report['records']} reviewed records; * marks the active run")
    for run in report["runs"]:
        head = (
            f"{'*' if run['active'] else ' '} run {run['id']}  {run['model']}  "
            f"prompt {(run['prompt_hash'] or '-')[:12]}  {run['records']} reviewed records"
        )
        click.echo(printable(head, one_line=True))
        table = Table()
        table.add_column("label / metric", no_wrap=True)
        for column in ("n", "κ", "TPR", "TNR", "bias [95% CI]"):
            table.add_column(column, justify="right", no_wrap=True)
        for name, block in run["labels"].items():
            stats = (_num(block["kappa"]), _num(block["tpr"]), _num(block["tnr"]))
            table.add_row(Text(name), str(block["n"]), *stats, "")
        for name, block in run["metrics"].items():
            ci = f"{_num(block['bias'])} [{_num(block['ci_low'])}, {_num(block['ci_high'])}]"
            table.add_row(Text(name), str(block["n"]), "", "", "", ci)
        console.print(table)
    from .runs_compare_text import print_paired, print_self_agreement

    print_self_agreement(console, report["self_agreement"])
    print_paired(console, report["paired"])
    for warning in report["warnings"] + (report["paired"] or {}).get("warnings", []):
        click.echo(printable(f"warning: {warning}", one_line=True), err=True)
