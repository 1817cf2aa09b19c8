"""Judging through the Batch API: submit now (Files upload + Batches), collect later.

For runs of 100,000 records: prompts already answered in the cache are labelled at
once; the rest go into JSONL request files of at most ``BATCH_LIMIT`` requests each
(the provider's limit), streamed through a temporary file so memory stays flat.
``collect`` reads finished batches back, validates each reply like the online run and
records per-record errors for replies that are missing, failed or malformed (a batch
cannot be retried per request: rerun `judge --only-missing` for those).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from itertools import chain
from pathlib import Path
from typing import IO, Any

import sqlite_utils

from ...store import judge_store
from ...store import records as store_records
from .client import (
    JudgeAbort,
    JudgeConfig,
    Stats,
    Tokens,
    api_key,
    scrub,
    sync_client,
    token_logprobs,
)
from .runner import Job, Writer, count_records, plan, save, start
from .tasks import OutputError, parse, task_for, verdict_logprobs

BATCH_LIMIT = 50_000
ENDPOINT = "/v1/chat/completions"
WAITING = ("validating", "in_progress", "finalizing", "cancelling")


@dataclass
class BatchReport:
    id: str
    status: str
    requests: int = 0
    labelled: int = 0
    errors: int = 0


def _request_line(job: Job, config: JudgeConfig) -> bytes:
    body = {
        "model": config.model,
        "messages": [{"role": "user", "content": job.prompt}],
        "temperature": config.temperature,
    }
    if config.logprobs:
        body["logprobs"] = True
    line = {"custom_id": f"{job.rowid}-{job.task.name}", "method": "POST", "url": ENDPOINT}
    line["body"] = body  # type: ignore[assignment]
    return json.dumps(line, ensure_ascii=False).encode() + b"\n"


def submit(
    db: sqlite_utils.Database, dataset: str, config: JudgeConfig, client: Any = None
) -> tuple[str, Stats, list[BatchReport]]:
    """Label what the cache already answers; upload the rest as batches."""
    api_key(config)
    waiting = judge_store.pending_batches(db, dataset)
    if waiting:  # submitting again would pay twice for the same prompts
        raise JudgeAbort(
            f"batch {waiting[0]['id']} is not collected yet: run `ragreview judge PATH "
            "--collect` first"
        )
    client = client or sync_client(config)
    stats = Stats(total=count_records(db, dataset))
    run_id = start(db, dataset, config, mode="batch")
    reports: list[BatchReport] = []
    spool: IO[bytes] | None = None
    items: list[tuple[str, int, str, str]] = []

    def flush() -> None:
        nonlocal spool
        if spool is None or not items:
            return
        spool.seek(0)
        uploaded = client.files.create(file=("ragreview-batch.jsonl", spool), purpose="batch")
        batch = client.batches.create(
            input_file_id=uploaded.id,
            endpoint=ENDPOINT,
            completion_window="24h",
            metadata={"ragreview_run": run_id},
        )
        judge_store.add_batch(db, batch.id, run_id, uploaded.id, batch.status, items)
        reports.append(BatchReport(batch.id, batch.status, requests=len(items)))
        stats.requests += 2
        spool.close()
        spool = None
        items.clear()

    status = "interrupted"
    writer = Writer(db)
    try:
        for job in plan(db, dataset, config, stats):
            hit = judge_store.cached(db, job.key) if config.use_cache else None
            if hit is not None:
                try:
                    parsed = parse(job.task, job.record, hit.text)
                    writer.add(partial(save, db, job, run_id, parsed, config.model, None))
                except OutputError:
                    pass
                else:
                    stats.cached += 1
                    stats.labelled += 1
                    continue
            if spool is None:
                spool = tempfile.TemporaryFile()
            spool.write(_request_line(job, config))
            items.append((f"{job.rowid}-{job.task.name}", job.rowid, job.task.name, job.key))
            if len(items) >= BATCH_LIMIT:
                flush()
        flush()
        status = "submitted" if reports else "finished"
    finally:
        writer.flush()
        if spool is not None:
            spool.close()
        judge_store.finish_run(db, run_id, status, stats.as_dict())
    return run_id, stats, reports


def _lines(client: Any, file_id: str | None) -> Iterator[dict[str, Any]]:
    if not file_id:
        return
    for line in client.files.content(file_id).iter_lines():
        if line.strip():
            try:
                item = json.loads(line)
            except (ValueError, RecursionError):
                continue  # a broken line leaves its item without output: reported below
            if isinstance(item, dict):
                yield item


Reply = tuple[str | None, int, int, Tokens | None, str | None]


def _reply(line: dict[str, Any]) -> Reply:
    """(content, prompt tokens, completion tokens, token log-probabilities, error) of one
    output-file line; a line of the wrong shape is that record's error."""
    try:
        return _reply_of(line)
    except (AttributeError, TypeError, ValueError):
        return None, 0, 0, None, "malformed reply in the batch output"


def _reply_of(line: dict[str, Any]) -> Reply:
    if line.get("error"):
        err = line["error"]
        return None, 0, 0, None, str(err.get("message") if isinstance(err, dict) else err)
    response = line.get("response") or {}
    body = response.get("body") or {}
    code = response.get("status_code", 200)
    if code != 200:
        message = body.get("error", {}).get("message") if isinstance(body, dict) else None
        return None, 0, 0, None, f"HTTP {code}: {message or body}"
    usage = body.get("usage") or {}
    try:
        choice = body["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None, 0, 0, None, "the reply has no message"
    if content is not None and not isinstance(content, str):
        return None, 0, 0, None, "the message content is not text"
    return (
        content,
        int(usage.get("prompt_tokens") or 0),
        int(usage.get("completion_tokens") or 0),
        token_logprobs(choice) if isinstance(choice, dict) else None,
        None,
    )


def _take(
    db: sqlite_utils.Database,
    writer: Writer,
    line: dict[str, Any],
    item: tuple[int, str, str],
    run: tuple[str, str],
    config: JudgeConfig,
    stats: Stats,
    report: BatchReport,
) -> None:
    """Store one output line's labels (or its record's error) for a batch item of run
    ``(run id, model)``."""
    rowid, task_name, key = item
    run_id, model = run
    stored = store_records.get(db, rowid)
    task = task_for(stored.record, task_name)
    assert task is not None
    content, p_tok, c_tok, tokens, problem = _reply(line)
    stats.prompt_tokens += p_tok
    stats.completion_tokens += c_tok
    if content is not None:
        try:
            parsed = parse(task, stored.record, content)
        except OutputError as err:
            problem = f"invalid output: {err}"
        else:
            job = Job(rowid, stored.record, task, "", key)
            reply = judge_store.CachedResponse(content, p_tok, c_tok)
            logprobs = verdict_logprobs(task, stored.record, content, tokens) if tokens else None
            writer.add(partial(save, db, job, run_id, parsed, model, reply, logprobs))
            report.labelled += 1
            return
    message = scrub(problem or "no reply", config)
    writer.add(partial(judge_store.add_error, db, rowid, run_id, task_name, message))
    report.errors += 1


def _collect_one(
    db: sqlite_utils.Database,
    client: Any,
    pending: dict[str, Any],
    config: JudgeConfig,
    stats: Stats,
) -> BatchReport:
    batch = client.batches.retrieve(pending["id"])
    report = BatchReport(batch.id, batch.status)
    if batch.status in WAITING:
        judge_store.set_batch_status(db, batch.id, batch.status)
        return report
    items = judge_store.batch_items(db, batch.id)
    report.requests = len(items)
    seen: set[str] = set()
    run = (pending["run"], pending["model"])
    writer = Writer(db)
    lines = chain(_lines(client, batch.output_file_id), _lines(client, batch.error_file_id))
    for line in lines:
        cid = line.get("custom_id")
        if cid not in items or cid in seen:
            continue
        seen.add(cid)
        _take(db, writer, line, items[cid], run, config, stats, report)
    for cid, (rowid, task_name, _) in items.items():
        if cid not in seen:
            message = f"batch {batch.status}: no reply"
            writer.add(
                partial(judge_store.add_error, db, rowid, pending["run"], task_name, message)
            )
            report.errors += 1
    writer.flush()
    judge_store.set_batch_status(db, batch.id, batch.status, collected=True)
    return report


def _file_lines(path: Path) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """(line number, object or None when the line is not a JSON object) of a local file."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                item = json.loads(raw)
            except (ValueError, RecursionError):
                item = None
            yield number, item if isinstance(item, dict) else None


def _collect_file(
    db: sqlite_utils.Database, dataset: str, path: Path, config: JudgeConfig, stats: Stats
) -> tuple[list[BatchReport], list[str]]:
    """Read a local Batch-format output file (``vllm run-batch``, or one downloaded
    from the provider) into the dataset's pending batches, matching lines by
    ``custom_id``. A batch is collected once the file answered all of its items; the
    rest wait for another file. Returns the reports and the problems found in the file."""
    pending = judge_store.pending_batches(db, dataset)
    owner: dict[str, tuple[dict[str, Any], tuple[int, str, str]]] = {}
    for batch in pending:
        for custom_id, item in judge_store.batch_items(db, batch["id"]).items():
            owner[custom_id] = (batch, item)
    reports = {b["id"]: BatchReport(b["id"], "collected") for b in pending}
    seen: set[str] = set()
    problems: list[str] = []
    unknown = 0
    writer = Writer(db)
    for number, line in _file_lines(path):
        cid = None if line is None else line.get("custom_id")
        if line is None or not isinstance(cid, str):
            field = "the line is not a JSON object" if line is None else "custom_id is missing"
            problems.append(f"{path}:{number}: {field}")
            continue
        if cid not in owner:
            unknown += 1
            continue
        if cid in seen:
            problems.append(f"{path}:{number}: custom_id {cid!r} repeats an earlier line")
            continue
        seen.add(cid)
        batch, item = owner[cid]
        report = reports[batch["id"]]
        report.requests += 1
        _take(db, writer, line, item, (batch["run"], batch["model"]), config, stats, report)
    writer.flush()
    if unknown:
        problems.append(f"{path}: {unknown} lines answer no pending batch of this dataset")
    for batch in pending:
        missing = sum(1 for cid, (b, _) in owner.items() if b is batch and cid not in seen)
        if missing:
            reports[batch["id"]].status = f"{missing} items still unanswered"
        else:
            judge_store.set_batch_status(db, batch["id"], "completed", collected=True)
    return [r for r in reports.values() if r.requests], problems


def collect(
    db: sqlite_utils.Database, dataset: str, config: JudgeConfig, client: Any = None
) -> tuple[Stats, list[BatchReport]]:
    """Read back every finished batch of the dataset; report those still running."""
    api_key(config)
    client = client or sync_client(config)
    stats = Stats()
    reports, per_run = [], []
    for pending in judge_store.pending_batches(db, dataset):
        before = (stats.prompt_tokens, stats.completion_tokens)
        report = _collect_one(db, client, pending, config, stats)
        reports.append(report)
        tokens = (stats.prompt_tokens - before[0], stats.completion_tokens - before[1])
        per_run.append((pending["run"], report, tokens))
    _finish(db, dataset, stats, per_run)
    return stats, reports


def collect_file(
    db: sqlite_utils.Database, dataset: str, path: Path, config: JudgeConfig
) -> tuple[Stats, list[BatchReport], list[str]]:
    """``collect`` from a local Batch-format output file instead of the provider (no
    key needed). Returns (stats, reports, problems found in the file)."""
    stats = Stats()
    run_of = {p["id"]: p["run"] for p in judge_store.pending_batches(db, dataset)}
    reports, problems = _collect_file(db, dataset, path, config, stats)
    per_run = [(run_of[r.id], r, (0, 0)) for r in reports]
    if len({run for run, _, _ in per_run}) == 1:  # the file's tokens are that run's
        per_run[0] = (per_run[0][0], per_run[0][1], (stats.prompt_tokens, stats.completion_tokens))
    _finish(db, dataset, stats, per_run)
    return stats, reports, problems


def _finish(
    db: sqlite_utils.Database,
    dataset: str,
    stats: Stats,
    per_run: list[tuple[str, BatchReport, tuple[int, int]]],
) -> None:
    """Add the collected batches' counts to their runs and to ``stats``."""
    runs: dict[str, Stats] = {}
    for run_id, report, (p_tok, c_tok) in per_run:
        stats.labelled += report.labelled
        stats.errors += report.errors
        run_stats = runs.setdefault(run_id, Stats())
        run_stats.labelled += report.labelled
        run_stats.errors += report.errors
        run_stats.prompt_tokens += p_tok
        run_stats.completion_tokens += c_tok
    still = {p["run"] for p in judge_store.pending_batches(db, dataset)}
    for run_id, run_stats in runs.items():
        previous = judge_store.get_run(db, run_id) or {}
        totals = {k: int(previous.get(k) or 0) for k in ("requests", "cached")}
        for k in ("labelled", "errors", "prompt_tokens", "completion_tokens"):
            totals[k] = int(previous.get(k) or 0) + getattr(run_stats, k)
        # a run with batches still running stays 'submitted' until the last is read
        judge_store.finish_run(db, run_id, "submitted" if run_id in still else "finished", totals)
