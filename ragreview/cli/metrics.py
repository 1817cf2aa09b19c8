"""``ragreview metrics``: dataset (or per-record) metrics, judge vs reviewed."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from itertools import chain, islice
from typing import Any

import click
import orjson

from ..core.safe_text import json_bytes_for_terminal, json_for_terminal, printable
from ..services import estimates
from ..store import metric_reads, metric_summary_reads
from . import cli
from .common import user_errors
from .options import dataset_option, db_option, json_option
from .queue_cmd import target_option
from .session import open_target


def _number(value: Any) -> Any:
    """JSON has no NaN/Infinity: such values are written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _clean(values: dict[str, Any]) -> dict[str, Any]:
    return {k: _number(v) for k, v in values.items()}


def _line(obj: dict[str, Any]) -> str:
    out = dict(obj)
    for layer in ("judge", "effective"):
        out[layer] = _clean(out[layer])
    return json_for_terminal(json.dumps(out, ensure_ascii=False, allow_nan=False))


CHUNK = 2_000  # lines per write


def _write_lines(rows: Iterator[dict]) -> None:
    """One JSON line per record, written in chunks: orjson writes NaN/Infinity as null
    (as ``_number`` does) and non-ASCII text as is; DEL and C1 controls are escaped."""
    for chunk in iter(lambda: list(islice(rows, CHUNK)), []):
        lines = b"\n".join(map(orjson.dumps, chunk)) + b"\n"
        click.echo(json_bytes_for_terminal(lines), nl=False)  # bytes: to binary stdout


@cli.command()
@click.argument("path")
@db_option
@dataset_option
@click.option("--by", "by", metavar="FIELD", help="One line per value of a record field.")
@click.option("--per-record", is_flag=True, help="One line per record instead of the dataset.")
@target_option
@json_option
def metrics(
    path: str,
    db: str | None,
    dataset: str | None,
    by: str | None,
    per_record: bool,
    target_halfwidth: float | None,
    as_json: bool,
) -> None:
    """Every metric computed from the judge's labels and from the reviewed labels.

    Without --by: also the corrected estimate of each mean from the latest review draw
    (``ragreview queue``) with its 95 % interval (docs/estimate.md).
    """
    if target_halfwidth is not None and not target_halfwidth > 0:
        raise click.UsageError("--target-halfwidth must be positive")
    with user_errors():
        opened = open_target(path, db, dataset, read_only=True)
        name = opened.dataset
        if per_record:
            rows = metric_reads.iter_record_values(opened.db, name)
            if as_json:
                _write_lines(rows)
            else:
                _print_records(rows)
            return
        if by:
            summaries = metric_summary_reads.grouped_summaries(opened.db, name, by)
        else:
            summaries = [metric_summary_reads.dataset_summary(opened.db, name)]
            summaries[0]["estimate"] = estimates.dataset_estimates(
                opened.db, name, target_halfwidth
            )
        assumed = _assumed(opened.db, name, summaries[0]["judge"])
        if as_json:
            for summary in summaries:
                click.echo(_line({**summary, "assumed": assumed} if assumed else summary))
            return
        from ..services import source_aggregates  # (only where a table is printed)

        _print_summaries(
            name,
            summaries,
            {
                **metric_summary_reads.stored_comparison(opened.db, name),
                **source_aggregates.compare(opened.db, name),
            },
            None if by else summaries[0]["estimate"],
        )
        for setting, value in assumed.items():
            click.echo(
                f"{setting} = {json.dumps(value)} is assumed: DeepEval's default, the run file "
                f"does not record it (change it with `ragreview settings PATH {setting}=true`)"
            )
        if not by and any(k.startswith("rgb.") for k in summaries[0]["judge"]):
            groups = [  # only groups holding RGB records: other tasks have no noise rate
                g
                for g in metric_summary_reads.grouped_summaries(opened.db, name, "noise_rate")
                if any(k.startswith("rgb.") for k in g["judge"])
            ]
            if len(groups) > 1:
                _print_noise_table(groups)


def _assumed(db: Any, dataset: str, judge: dict[str, Any]) -> dict[str, Any]:
    """The settings a metric shown depends on that the source file does not record,
    with their value, while not set by hand (DeepEval's penalize_ambiguous_claims)."""
    from ..store import settings as store_settings

    name = "deepeval.penalize_ambiguous_claims"
    if "deepeval.faithfulness" not in judge:
        return {}
    if store_settings.is_set(db, dataset, name):
        return {}
    return {name: store_settings.get_all(db, dataset)[name]}


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if value.is_integer() and abs(value) >= 2:
            return f"{value:.0f}"
        return f"{value:.4f}"
    return str(value)


def _delta(judge: Any, reviewed: Any) -> str:
    if judge is None or reviewed is None:
        return ""
    diff = reviewed - judge
    return "" if abs(diff) < 5e-5 else f"{diff:+.4f}"


def _print_summaries(
    dataset: str, summaries: list[dict], stored: dict[str, dict], estimate: dict | None = None
) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    for summary in summaries:
        title = Text(printable(dataset, one_line=True))
        if summary["group"]:
            group = ", ".join(f"{k}={v}" for k, v in summary["group"].items())
            title.append(" · " + printable(group, one_line=True))
        title.append(f" · {summary['records']} records, {summary['reviewed_records']} reviewed")
        table = Table(title=title, title_justify="left")
        table.add_column("metric")
        table.add_column("judge", justify="right")
        table.add_column("reviewed", justify="right")
        table.add_column("Δ", justify="right")
        # records where a metric is undefined are left out of its mean: say how many
        undefined = summary.get("undefined") or {}
        if any(undefined.values()):
            table.add_column("undefined", justify="right")
        judge, reviewed = summary["judge"], summary["effective"]
        for name in sorted(judge.keys() | reviewed.keys()):
            j, r = judge.get(name), reviewed.get(name)
            cells = [_fmt(j), _fmt(r), _delta(j, r)]
            if any(undefined.values()):
                uj = undefined.get("judge", {}).get(name, 0)
                ur = undefined.get("effective", {}).get(name, 0)
                cells.append("" if not (uj or ur) else str(uj) if uj == ur else f"{uj} → {ur}")
            table.add_row(Text(name), *cells)
        console.print(table)
    if estimate is not None:  # the corrected estimates, under the values they correct
        from .estimate_text import print_estimates

        print_estimates(estimate, console)
    if stored:
        table = Table(
            title="stored scores in the source vs recomputed from the judge's labels",
            title_justify="left",
        )
        for column in ("metric", "records", "disagree", "max |diff|", "RMSE"):
            table.add_column(column, justify="left" if column == "metric" else "right")
        for name, row in stored.items():
            table.add_row(
                Text(name),
                str(row["n"]),
                str(row["disagree"]),
                _fmt(row["max_abs_diff"]),
                _fmt(row["rmse"]),
            )
        console.print(table)


RGB_RATES = (
    "rgb.accuracy",
    "rgb.rejection_rate",
    "rgb.reject_evalue.rejection_rate",
    "rgb.reject_evalue.accuracy",
    "rgb.error_detection_rate",
    "rgb.error_correction_rate",
    "rgb.fact_evalue.error_detection_rate",
    "rgb.fact_evalue.accuracy",
    "rgb.fact_evalue.error_correction_rate",
)


def _print_noise_table(groups: list[dict]) -> None:
    """RGB reports its rates per noise rate: judge → reviewed for each."""
    from rich.console import Console
    from rich.table import Table

    shown = [r for r in RGB_RATES if any(r in g["judge"] or r in g["effective"] for g in groups)]
    table = Table(title="RGB by noise rate (judge → reviewed)", title_justify="left")
    table.add_column("noise_rate", justify="right")
    table.add_column("records", justify="right")
    for name in shown:
        table.add_column(name.removeprefix("rgb."), justify="right")
    for g in groups:
        cells = []
        for name in shown:
            j, r = g["judge"].get(name), g["effective"].get(name)
            cells.append(_fmt(j) if j == r else f"{_fmt(j)} → {_fmt(r)}")
        rate = g["group"]["noise_rate"]
        table.add_row("–" if rate is None else str(rate), str(g["records"]), *cells)
    Console().print(table)


TABLE_LIMIT = 500  # records; past this a table would hold everything in memory: stream lines


def _print_records(rows: Iterator[dict]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    first = list(islice(rows, TABLE_LIMIT + 1))
    if len(first) > TABLE_LIMIT:
        for row in chain(first, rows):
            for name in sorted(row["judge"].keys() | row["effective"].keys()):
                j, r = row["judge"].get(name), row["effective"].get(name)
                rid = printable(row["id"], one_line=True)
                line = f"{rid}\t{name}\t{_fmt(j)}\t{_fmt(r)}\t{_delta(j, r)}"
                click.echo(line.rstrip("\t"))
        return
    rows = iter(first)
    table = Table()
    for column in ("id", "metric", "judge", "reviewed", "Δ"):
        table.add_column(column, justify="left" if column in ("id", "metric") else "right")
    for row in rows:
        names = sorted(row["judge"].keys() | row["effective"].keys())
        for i, name in enumerate(names):
            j, r = row["judge"].get(name), row["effective"].get(name)
            table.add_row(
                Text(printable(row["id"], one_line=True) if i == 0 else ""),
                Text(name),
                _fmt(j),
                _fmt(r),
                _delta(j, r),
            )
    Console().print(table)
