"""The judge's reasoning the review screen shows: the reasoning of the run whose labels
it shows (docs/agreement.md, Judge runs).

An imported file carries its judge's reasoning in the source row (``core.families``
declares where). A judge run's reasoning is in its reply, kept in the response cache
under the prompt it sent: the run's stored template rendered for the record again.
Where a run gave a family's labels on the record, the source row's reasoning for that
family is not shown (it explains other verdicts); the run's own is, when its reply is
still in the cache.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..core import families as fam
from ..core.record import Record
from ..store import judge_store

if TYPE_CHECKING:  # (sqlite_utils imports click: the review model must load without it)
    import sqlite_utils


def reasons(
    db: sqlite_utils.Database,
    rowid: int,
    record: Record,
    families: tuple[fam.Family, ...],
    source: str | None,
) -> fam.Reasons:
    runs = {n: run for n, run in judge_store.label_runs(db, rowid).items() if _family(n)}
    rejudged = {_family(n) for n, run in runs.items() if run is not None}
    out = {
        key: why
        for key, why in fam.reasons(record, families, source).items()
        if _family(key[0]) not in rejudged
    }
    for run_id in sorted({run for run in runs.values() if run is not None}):
        reply = _reply(db, run_id, record)
        if reply is None:
            continue
        given = {n for n, run in runs.items() if run == run_id}
        names = {_family(n) for n in given}
        mine = tuple(f for f in fam.FAMILIES if f.name in names)
        for key, why in fam.reasons(record, mine, json.dumps(reply)).items():
            out[key] = why
        explanation = reply.get("explanation")  # the record-level verdicts' prompts
        if isinstance(explanation, str) and explanation.strip():
            for name in sorted(given):
                out.setdefault((name, "*"), explanation)
    return out


def _family(label: str) -> str | None:
    try:
        return fam.family_of_label(label).name
    except KeyError:
        return None


def _reply(db: sqlite_utils.Database, run_id: str, record: Record) -> dict[str, Any] | None:
    """The run's reply on the record, from the cache (None when it is not there)."""
    # (here, not at the top: the judge package loads its client, and the review model
    # must load without click or asyncio)
    from .judge.tasks import default_template, extract_json, render, task_for

    run = judge_store.get_run(db, run_id)
    if run is None or run.get("mode") == "import":
        return None
    try:
        templates = json.loads(run.get("prompt") or "{}")
    except ValueError:
        templates = {}
    task = task_for(record, run["task"])
    if task is None or not isinstance(templates, dict):
        return None
    template = templates.get(task.name) or default_template(task.name)
    cached = judge_store.cached(db, judge_store.cache_key(run["model"], render(template, record)))
    if cached is None:
        return None
    try:
        reply = extract_json(cached.text)
    except (ValueError, TypeError):
        return None
    return reply if isinstance(reply, dict) else None
