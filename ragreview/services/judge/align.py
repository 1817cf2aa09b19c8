"""``ragreview align``: a candidate judge from the reviewer's corrections, run in folds
(docs/align.md).

The task's prompt gets a block of few-shot examples in front: corrections (the
context, the judge's label, the reviewer's label, the reason) from the reviewed
records. The reviewed records are judged again as one new run, fold by fold, each
fold's prompt holding only corrections of the *other* folds (``core.align_folds``).
The run stores every fold's prompt text and, in its parameters, the fold of each
record and the corrections each fold was shown. The active judge layer (the judge
the reviewer corrected) stays active: the candidate is scored beside it with
``agreement --runs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import sqlite_utils

from ...core.align_folds import Correction, assign_folds, examples_for, show
from ...core.errors import RagreviewError
from ...core.labels import CATALOGUE
from ...core.record import Record
from ...store import guidelines, judge_store, run_layers
from ...store import records as store_records
from .client import JudgeConfig, Stats, api_key
from .runner import Job, Progress, run_jobs, template
from .tasks import TASKS, render
from .tasks import fields as prompt_fields

EXAMPLES_HEAD = (
    "Before the task: examples of earlier verdicts on other records that a human "
    "reviewer corrected, with the reviewer's reason. Where a case is alike, follow the "
    "reviewer's judgement.\n\n"
)


@dataclass(frozen=True)
class AlignPlan:
    fold_of: dict[str, int]
    examples: dict[int, list[Correction]]
    prompts: dict[int, str]  # fold -> the examples block put in front of the template
    jobs: list[Job]


def _target_text(record: Record, name: str, target: str) -> str | None:
    kind = CATALOGUE[name].target if name in CATALOGUE else "*"
    if kind == "doc":
        found = dict(record.doc_sentences).get(target) if record.doc_sentences else None
        return None if found is None else f"document sentence {target}: {found}"
    if kind == "response":
        found = dict(record.response).get(target)
        return None if found is None else f"response sentence {target}: {found}"
    if kind == "fact":
        found = {f.key: f.text for f in record.facts}.get(target)
        return None if found is None else f"fact {target}: {found}"
    return None


def example_text(number: int, correction: Correction, record: Record) -> str:
    """One example: the record's context, what the judge said, what the reviewer said
    and why (and the guideline rule the correction applies, with its text)."""
    given = prompt_fields(record)
    lines = [f"Example {number}:"]
    if given["question"]:
        lines.append(f"  Question: {given['question']}")
    if given["response_text"]:
        lines.append(f"  Response: {given['response_text']}")
    about = _target_text(record, correction.name, correction.target)
    if about:
        lines.append(f"  Item: {about}")
    lines.append(f"  The judge said: {correction.name} = {show(correction.judge)}")
    lines.append(f"  The reviewer corrected it to: {correction.name} = {show(correction.human)}")
    if correction.reason:
        lines.append(f"  Reason: {correction.reason}")
    if correction.rule:
        rule = correction.rule + (f" ({correction.rule_text})" if correction.rule_text else "")
        lines.append(f"  Guideline rule: {rule}")
    return "\n".join(lines)


def examples_block(examples: Sequence[Correction], records: dict[str, Record]) -> str:
    if not examples:
        return ""
    shown = [example_text(i + 1, c, records[c.record]) for i, c in enumerate(examples)]
    return EXAMPLES_HEAD + "\n\n".join(shown) + "\n\n---\n\n"


def corrections(
    db: sqlite_utils.Database, stored: Sequence[store_records.StoredRecord], names: set[str]
) -> list[Correction]:
    """Every item of these records whose reviewer value differs from the judge layer's
    (a defaulted label absent from the judge counting as its default), with the reason
    and the guideline rule (id and text) of the event that set it, in record order."""
    texts = guidelines.rules(db, stored[0].dataset) if stored else {}
    reasons = guidelines.reasons_and_rules(db, [s.rowid for s in stored])
    out = []
    for s in stored:
        for name, targets in sorted(s.human.items()):
            if name not in names:
                continue
            default = CATALOGUE[name].default if name in CATALOGUE else None
            for target, value in targets.items():
                judged = s.judge.get(name, {}).get(target, default)
                if judged is None or judged == value:
                    continue
                reason, rule = reasons.get((s.rowid, name, target), (None, None))
                rule_text = None if rule is None else texts.get(rule)
                out.append(Correction(s.id, name, target, judged, value, reason, rule, rule_text))
    return out


def plan(
    db: sqlite_utils.Database,
    dataset: str,
    config: JudgeConfig,
    folds: int,
    limit: int,
    seed: int,
) -> AlignPlan:
    task = TASKS.get(config.task)
    if task is None:
        raise RagreviewError(f"align needs one task (--task {'|'.join(TASKS)})")
    stored = [
        s
        for s in store_records.iterate(db, dataset, status="reviewed")
        if task.needs(s.record) is None
    ]
    if len(stored) < folds:
        raise RagreviewError(
            f"align needs at least {folds} reviewed records the {task.name} task can judge "
            f"(one per fold); {len(stored)} found"
        )
    found = corrections(db, stored, set(task.produces))
    if not found:
        raise RagreviewError(
            f"no corrections to learn from: no reviewed record has a {task.name} label "
            "the reviewer changed"
        )
    fold_of = assign_folds([s.id for s in stored], folds, seed)
    records = {s.id: s.record for s in stored}
    examples = {f: examples_for(f, fold_of, found, limit, seed) for f in range(folds)}
    prompts = {f: examples_block(examples[f], records) for f in range(folds)}
    base = template(config, task.name)
    jobs = []
    for s in stored:
        # the block goes in front of the rendered template: record text in an
        # example is never read as a placeholder, and the record comes last
        prompt = prompts[fold_of[s.id]] + render(base, s.record)
        key = judge_store.cache_key(config.model, prompt)
        jobs.append(Job(s.rowid, s.record, task, prompt, key))
    return AlignPlan(fold_of, examples, prompts, jobs)


def run(
    db: sqlite_utils.Database,
    dataset: str,
    config: JudgeConfig,
    *,
    folds: int = 5,
    examples: int = 8,
    seed: int = 0,
    on_progress: Progress | None = None,
) -> tuple[str, Stats, AlignPlan]:
    """Judge the reviewed records with the fold prompts as one new run; the run that
    was active stays active. Returns (run id, stats, plan)."""
    api_key(config)
    chosen = plan(db, dataset, config, folds, examples, seed)
    base = template(config, config.task)
    params: dict[str, Any] = {
        "align": {
            "folds": folds,
            "examples": examples,
            "seed": seed,
            "fold": chosen.fold_of,
            "fold_examples": {str(f): [c.key() for c in got] for f, got in chosen.examples.items()},
        }
    }
    config = replace(config, extra_params={**config.extra_params, **params})
    before = run_layers.active(db, dataset)
    prompts = {config.task: base}
    prompts.update({f"{config.task} fold {f}": block + base for f, block in chosen.prompts.items()})
    run_id = judge_store.start_run(
        db,
        dataset,
        config.model,
        config.base_url,
        config.task,
        "align",
        prompts=prompts,
        params=config.params(),
    )
    stats = Stats(total=len(chosen.jobs))
    try:
        run_jobs(db, config, iter(chosen.jobs), run_id, stats, on_progress)
    finally:
        if before is not None:
            run_layers.use(db, dataset, before)
    return run_id, stats, chosen
