"""Judge audit: ``ragreview agreement``, ``ragreview merge``, ``ragreview sample``."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from ..core import agreement_report
from ..core.agreement import BOOTSTRAP_RESAMPLES
from ..core.gc_pause import gc_paused, skip_final_collection
from ..core.quick_handoffs import quick_handoffs
from ..core.safe_text import json_for_terminal, printable, printable_all
from ..store import review_queries, reviewer_layers
from ..store import settings as store_settings
from . import cli
from .common import remember_db, user_errors
from .options import dataset_option, db_option, json_option
from .session import open_target


def build_report(
    db: Any,
    dataset: str,
    seed: int,
    resamples: int,
    all_reviewed: bool,
    outputs: Iterable[str] = (),
) -> tuple[dict[str, Any], dict[str, list[tuple[float, float]]]]:
    """The agreement report of one dataset, and the per-metric points for plots.
    ``outputs``: the modules that will write it (``_import_sections``)."""
    sample = review_queries.latest_sample(db, dataset)
    only = None if sample is None or all_reviewed else set(sample.members)
    # the stored metric rows, exactly what `metrics --per-record` shows, read on a
    # thread of their own beside the label count
    points_read = agreement_report.Background(
        review_queries.reviewed_metric_pairs_apart(db, dataset, only)
    )
    settings = store_settings.get_all(db, dataset)
    # the records stream past a page at a time: the report keeps counts, not records
    reviewed = review_queries.iter_reviewed(db, dataset, only)
    report = agreement_report.build(
        reviewed,
        points_read,
        seed=seed,
        resamples=resamples,
        meanwhile=lambda: _import_sections(outputs),
    )
    points = points_read.result()
    report["dataset"] = dataset
    report["variant"] = settings
    if sample is not None:
        block = review_queries.sample_report(db, sample)
        block["restricted_to_sample"] = only is not None
        report["sample"] = block
        if only is None and block["reviewed_outside_sample"]:
            report["warnings"].append(
                f"{block['reviewed_outside_sample']} reviewed records are outside the sample "
                "and were counted (--all-reviewed): the numbers may not describe the dataset"
            )
        if block["reviewed"] < block["n"]:
            report["warnings"].append(
                f"only {block['reviewed']} of the {block['n']} sampled records are reviewed"
            )
    from ..services import estimates, merging

    human = merging.human_agreement(db, dataset)
    if human is not None:
        human["conflicts"] = len(merging.conflicts(db, dataset))
        human["open_conflicts"] = len(merging.conflicts(db, dataset, open_only=True))
        report["reviewers"] = human
    from ..services import humans_first, rule_agreement, run_compare
    from ..store import run_layers

    # the judge against its own repeats (`judge --repeat`), beside judge vs reviewer
    selfs = run_compare.self_agreement(
        db, dataset, run_layers.run_params(db, dataset), seed=seed, resamples=resamples
    )
    for block in selfs:
        for name, stats in block["labels"].items():
            stats["kappa_vs_human"] = report["labels"].get(name, {}).get("kappa")
    if selfs:
        report["self_agreement"] = selfs

    by_rule = rule_agreement.build(db, dataset, all_reviewed=all_reviewed)
    if by_rule is not None:  # judge vs reviewer on the items each guideline rule decided
        report["by_rule"] = by_rule
    first = humans_first.build(db, dataset, seed=seed, resamples=resamples)
    if first is not None:  # the report starts with how far the humans agree
        flagged = [n for n, b in first["labels"].items() if b["humans_below_judge"]]
        if flagged:
            report["warnings"].append(
                "the reviewers agree less with each other than the judge agrees with them "
                f"on: {', '.join(flagged)}; sharpen the guidelines before the judge"
            )
        report = {"humans_first": first, **report}
    from ..formats.catalogue import without_rubric  # (loaded by _import_sections)

    annotators = reviewer_layers.annotator_report(db, dataset, without_rubric())
    if annotators is not None:  # human metrics declared by the file (InspectorRAGet)
        report["annotators"] = annotators
        # and the reviewer's own values of them against each annotator and the aggregate
        report["reviewer_vs_annotators"] = reviewer_layers.reviewer_vs_annotators(db, dataset)
    # the corrected headline numbers from the latest review draw (docs/estimate.md)
    report["estimate"] = estimates.dataset_estimates(db, dataset)
    return report, points


def _import_sections(outputs: Iterable[str]) -> None:
    """Import what the report's other sections, and the ``outputs`` modules that write
    it, need while the metrics' bootstrap is still drawn on its thread
    (``agreement_report.build``'s ``meanwhile``), rather than before the report's
    threads start or after the bootstrap."""
    from ..formats import catalogue  # noqa: F401
    from ..services import estimates, humans_first, merging, rule_agreement, run_compare  # noqa: F401
    from ..store import run_layers  # noqa: F401

    for name in outputs:
        importlib.import_module(name, __package__)


def json_line(obj: Any) -> str:
    return json_for_terminal(json.dumps(obj, ensure_ascii=False))


@cli.command()
@click.argument("path")
@json_option
@click.option(
    "--html", "html_path", metavar="FILE", help="Also write a self-contained HTML report."
)
@click.option(
    "--seed", default=0, type=click.IntRange(min=0), show_default=True, help="Bootstrap seed."
)
@click.option(
    "--resamples", default=BOOTSTRAP_RESAMPLES, show_default=True, help="Bootstrap resamples."
)
@click.option(
    "--all-reviewed",
    is_flag=True,
    help="Count every reviewed record even when a sample was drawn (default: the sample).",
)
@click.option(
    "--runs", "by_run", is_flag=True, help="Score every judge run against the same human labels."
)
@click.option("--base", metavar="ID", help="With --runs: the run compared against (paired).")
@click.option("--candidate", metavar="ID", help="With --runs: the run compared with --base.")
@db_option
@dataset_option
def agreement(
    path: str,
    as_json: bool,
    html_path: str | None,
    seed: int,
    resamples: int,
    all_reviewed: bool,
    by_run: bool,
    base: str | None,
    candidate: str | None,
    db: str | None,
    dataset: str | None,
) -> None:
    """How far the judge agrees with the reviewers, over records marked reviewed.

    Per label: confusion (judge = prediction, human = truth), accuracy, Cohen's κ,
    precision, recall, F1, TPR, TNR. Per metric: judge mean, reviewed mean, bias with
    a seeded bootstrap 95 % interval, Pearson, Spearman, RMSE.
    """
    if resamples < 1:
        raise click.UsageError("--resamples must be at least 1")
    if (base or candidate) and not by_run:
        raise click.UsageError("--base and --candidate compare judge runs: give --runs too")
    if by_run:
        if html_path:
            raise click.UsageError("--html writes the main report: give it without --runs")
        from .runs import print_runs_report

        print_runs_report(
            path, db, dataset, as_json, seed, resamples, all_reviewed, base, candidate
        )
        return
    skip_final_collection()  # (the process ends after the report: see there)
    with user_errors():
        opened = open_target(path, db, dataset, read_only=True)
        # (quick_handoffs: the report's threads hand the interpreter to each other)
        with gc_paused(), quick_handoffs():
            # (the text report's module loads Rich; the HTML one, its writer)
            outputs = [".audit_text"] if not as_json else []
            outputs += ["..services.report_html", "..services.output_file"] if html_path else []
            report, points = build_report(
                opened.db, opened.dataset, seed, resamples, all_reviewed, outputs
            )
        if html_path:
            from ..services import output_file, report_html

            inputs = [p for p in (opened.target.input_path,) if p is not None]
            html = report_html.render(report, points)
            output_file.write_text(opened.db, Path(html_path), html, inputs=inputs)
    if html_path:
        click.echo(printable(f"wrote {html_path}"), err=True)
    if as_json:
        click.echo(json_line(report))
    else:
        from .audit_text import print_report

        print_report(printable_all(report))


@cli.command("merge")
@click.argument("paths", nargs=-1, required=True, metavar="A.db B.db …")
@click.option("--into", "into", required=True, metavar="C.db", help="The merged database.")
@json_option
def merge_cmd(paths: tuple[str, ...], into: str, as_json: bool) -> None:
    """Combine several reviewers' files of the same dataset into one.

    Where the reviewers of a record agree, their labels carry over; where they
    disagree the item is a conflict to adjudicate (``ragreview open C.db``).
    """
    with user_errors():
        remember_db(into)
        from ..services import merging

        merged = merging.merge(paths, into)  # the merge use case, with its refusals
    summary, agreement_by_dataset = merged.summary, merged.agreement
    if as_json:
        click.echo(
            json_line(
                {
                    "into": into,
                    "reviewers": [
                        {"path": p, "reviewer": r, "reviewed": n} for p, r, n in summary.reviewers
                    ],
                    "records": summary.records,
                    "conflicts": summary.conflicts,
                    "agreement": agreement_by_dataset,
                    "warnings": summary.warnings,
                }
            )
        )
        return
    from .audit_text import print_merge

    print_merge(into, printable_all(summary), printable_all(agreement_by_dataset))


@cli.command()
@click.argument("path")
@click.option("--n", "n", required=True, type=int, help="How many records to draw.")
@click.option("--by", "by", metavar="FIELD", help="Stratify by this record field (e.g. task).")
@click.option("--seed", default=0, show_default=True, help="Random seed.")
@db_option
@dataset_option
def sample(
    path: str, n: int, by: str | None, seed: int, db: str | None, dataset: str | None
) -> None:
    """Draw a seeded (optionally stratified) sample of records to review.

    Prints the record ids. ``agreement`` then counts the reviewed records of the
    latest sample, so its numbers describe the whole dataset.
    """
    with user_errors():
        opened = open_target(path, db, dataset)
        drawn = review_queries.draw_sample(opened.db, opened.dataset, n, by, seed)
        ids = review_queries.record_ids(opened.db, drawn.members)
    for rid in ids:
        click.echo(printable(rid, one_line=True))
    how = f"stratified by {by}" if by else "simple random"
    click.echo(
        f"sample {drawn.id}: {len(ids)} of {drawn.population} records ({how}, seed {seed})",
        err=True,
    )


@cli.command("conflicts")
@click.argument("path")
@click.option("--open", "open_only", is_flag=True, help="Only conflicts not yet adjudicated.")
@json_option
@db_option
@dataset_option
def conflicts_cmd(
    path: str, open_only: bool, as_json: bool, db: str | None, dataset: str | None
) -> None:
    """List the items the reviewers of a merged file disagree on.

    Adjudicate in ``ragreview open`` or with ``ragreview label`` (an ordinary event).
    """
    with user_errors():
        opened = open_target(path, db, dataset, read_only=True)
        from ..services import merging

        found = merging.conflicts(opened.db, opened.dataset, open_only=open_only)
    for c in found:
        if as_json:
            click.echo(
                json_line(
                    {
                        "record": c.record,
                        "name": c.name,
                        "target": c.target,
                        "values": c.values,
                        "current": c.current,
                        "adjudicated": c.adjudicated,
                    }
                )
            )
        else:
            votes = " ".join(f"{who}={json.dumps(v)}" for who, v in c.values.items())
            done = " adjudicated" if c.adjudicated else ""
            line = f"{c.record} {c.name} {c.target}: {votes} (now {json.dumps(c.current)}){done}"
            click.echo(printable(line, one_line=True))
    if not as_json:
        click.echo(f"{len(found)} conflicts", err=True)
