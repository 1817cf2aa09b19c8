"""Rich tables for people: the agreement report and the merge summary.

Names that come from the data (reviewers, strata, dataset) go in as ``Text`` so that
no markup in them is ever interpreted.
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text


def num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def signed(value: Any) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _labels_table(title: str, labels: dict[str, Any], multiclass: dict[str, Any]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("label", no_wrap=True)
    for col in ("n", "acc", "κ", "prec", "rec/TPR", "TNR", "F1"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("TP FP FN TN", justify="right", no_wrap=True)
    for name, s in labels.items():
        c = s["confusion"]
        table.add_row(
            name,
            str(s["n"]),
            num(s["accuracy"], 2),
            num(s["kappa"], 2),
            num(s["precision"], 2),
            num(s["recall"], 2),
            num(s["tnr"], 2),
            num(s["f1"], 2),
            " ".join(str(c[k]) for k in ("tp", "fp", "fn", "tn")),
        )
        if name in multiclass:
            m = multiclass[name]
            table.add_row(
                Text("  all values", style="dim"),
                str(m["n"]),
                num(m["accuracy"], 2),
                num(m["kappa"], 2),
            )
    return table


def _metrics_table(metrics: dict[str, Any]) -> Table:
    table = Table(title="Metrics: judge vs reviewed (per record)", title_justify="left")
    table.add_column("metric", no_wrap=True)
    for col in ("n", "judge", "reviewed", "bias", "95 % CI", "r", "ρ", "RMSE"):
        table.add_column(col, justify="right", no_wrap=True)
    for name, s in metrics.items():
        ci = "–" if s["ci_low"] is None else f"[{s['ci_low']:+.3f}, {s['ci_high']:+.3f}]"
        excludes_zero = s["ci_low"] is not None and (s["ci_low"] > 0 or s["ci_high"] < 0)
        table.add_row(
            name,
            str(s["n"]),
            num(s["judge_mean"]),
            num(s["effective_mean"]),
            Text(signed(s["bias"]), style="bold" if excludes_zero else ""),
            ci,
            num(s["pearson"], 2),
            num(s["spearman"], 2),
            num(s["rmse"]),
        )
    return table


def _reviewers_table(human: dict[str, Any]) -> Table:
    names = ", ".join(human["reviewers"])
    table = Table(
        title=Text(f"Reviewers vs each other ({names}; {human['records']} records)"),
        title_justify="left",
    )
    for col in ("label", "items", "agreement", "κ", "α"):
        table.add_column(col, justify="left" if col == "label" else "right")
    for name, s in human["labels"].items():
        table.add_row(
            name,
            str(s["items"]),
            num(s["percent_agreement"]),
            num(s.get("kappa")),
            num(s["alpha"]),
        )
    return table


def make_console() -> Console:
    """Terminal width on a terminal; wide enough for the tables when piped to a file."""
    return Console(highlight=False, width=None if sys.stdout.isatty() else 132)


def print_report(report: dict[str, Any], console: Console | None = None) -> None:
    console = console or make_console()
    head = Text("Agreement for dataset ", style="bold")
    head.append(str(report.get("dataset", "")))
    head.append(f": {report['records']} reviewed records", style="bold")
    console.print(head)
    sample = report.get("sample")
    if sample is not None:
        how = sample["method"] + (f" by {sample['by']}" if sample["by"] else "")
        line = (
            f"sample {sample['id']}: {sample['n']} of {sample['population']} records, {how}, "
            f"seed {sample['seed']}, drawn {sample['drawn_at']}; {sample['reviewed']} reviewed; "
            + ("counting the sample only" if sample["restricted_to_sample"] else "counting all")
        )
        console.print(Text(line))
    else:
        console.print(
            Text("no sample drawn: the reviewed records may not represent the dataset "
                 "(see `ragreview sample`)", style="dim")
        )  # fmt: skip
    console.print(
        Text("judge = prediction, reviewer = truth; reviewed value = override, else the "
             "judge's label accepted", style="dim")
    )  # fmt: skip
    if "humans_first" in report:
        from .humans_first_text import humans_first_table

        console.print(humans_first_table(report["humans_first"]))
    if report["labels"]:
        console.print(_labels_table("Labels: judge vs reviewer", report["labels"],
                                    report["multiclass"]))  # fmt: skip
    if report.get("self_agreement"):
        from .runs_compare_text import print_self_agreement

        print_self_agreement(console, report["self_agreement"])
    if report["metrics"]:
        console.print(_metrics_table(report["metrics"]))
        boot = report["bootstrap"]
        console.print(
            Text(f"bias = judge − reviewed; r Pearson, ρ Spearman; percentile bootstrap over records, "
                 f"{boot['resamples']} resamples, seed {boot['seed']}; bold: interval "
                 "excludes 0", style="dim")
        )  # fmt: skip
    if report.get("estimate") and report["estimate"].get("metrics"):
        from .estimate_text import print_estimates

        print_estimates(report["estimate"], console)
    ind = report["independent"]
    if ind["records"]:
        console.print(_labels_table(
            f"Independent agreement (blind first pass, {ind['records']} records)",
            ind["labels"], ind["multiclass"]))  # fmt: skip
    else:
        console.print(Text("independent agreement: no blind first pass recorded", style="dim"))
    if "by_rule" in report:
        from .humans_first_text import rules_table

        console.print(rules_table(report["by_rule"]))
    if "reviewers" in report and report["reviewers"]["labels"]:  # (annotators alone: none)
        human = report["reviewers"]
        console.print(_reviewers_table(human))
        console.print(Text(f"{human['open_conflicts']} of {human['conflicts']} conflicts open"))
    if "annotators" in report:
        print_annotators(report["annotators"], console)
        mine = report.get("reviewer_vs_annotators")
        if mine:
            print_reviewer_vs_annotators(mine, console)
        else:
            console.print(Text("no reviewed record has a value of yours for the file's human "
                               "metrics: nothing to compare with its annotators", style="dim"))  # fmt: skip
    for warning in report["warnings"]:
        console.print(Text("warning: " + warning, style="yellow"))


def print_annotators(block: dict[str, Any], console: Console) -> None:
    table = Table(title="Annotators of the file's human metrics", title_justify="left")
    for column in ("metric", "annotators", "paired records", "α nominal", "α ordinal", "κ_w"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for name, stats in block.items():
        table.add_row(
            Text(name),
            num(stats["annotators"]),
            num(stats["paired_records"]),
            num(stats["alpha_nominal"]),
            num(stats["alpha_ordinal"]),
            num(stats["weighted_kappa"]),
        )
    console.print(table)
    autos = list(dict.fromkeys(a for stats in block.values() for a in stats["correlations"]))
    if not autos:
        return
    corr = Table(
        title="Automatic metrics vs the annotators' aggregate (Spearman ρ / Kendall τ-b)",
        title_justify="left",
    )
    corr.add_column("automatic metric")
    for name, stats in block.items():
        corr.add_column(Text(f"{name} ({stats['aggregator']})"), justify="right")
    for auto in autos:
        cells = []
        for stats in block.values():
            got = stats["correlations"].get(auto)
            cells.append("–" if got is None else f"{num(got['spearman'])} / {num(got['kendall'])}")
        corr.add_row(Text(auto), *cells)
    console.print(corr)


def print_reviewer_vs_annotators(block: dict[str, Any], console: Console) -> None:
    """Per metric, the reviewer against each annotator and the annotators' aggregate."""
    table = Table(
        title="You vs the file's annotators (quadratic weighted κ / Krippendorff's ordinal α)",
        title_justify="left",
    )
    for column in ("metric", "against", "records", "κ_w", "α ordinal"):
        table.add_column(column, justify="left" if column in ("metric", "against") else "right")
    for name, stats in block.items():
        rows = [(f"aggregate ({stats['aggregator']})", stats["aggregate"])]
        rows += list(stats["annotators"].items())
        for i, (against, s) in enumerate(rows):
            table.add_row(
                Text(name if i == 0 else ""),
                Text(against),
                num(s["n"]),
                num(s["weighted_kappa"]),
                num(s["alpha_ordinal"]),
            )
    console.print(table)


def print_merge(into: str, summary: Any, agreement: dict[str, Any]) -> None:
    console = make_console()
    for path, reviewer, count in summary.reviewers:
        console.print(Text(f"{path}: {reviewer}, {count} records reviewed"))
    console.print(Text(f"{into}: {summary.records} records, {summary.conflicts} conflicting items"))
    for name, human in agreement.items():
        if human is not None and human["labels"]:
            console.print(Text(f"dataset {name}"))
            console.print(_reviewers_table(human))
    for warning in summary.warnings:
        console.print(Text("warning: " + warning, style="yellow"))
    if summary.conflicts:
        console.print(Text(f"adjudicate with: ragreview open {into}"))
