"""Running the judge over a dataset: planning, concurrency, cache, retries, writes.

Each record's result (cached response + labels, or an error) is written in its own
short transaction as soon as it arrives, so an interrupted run keeps every finished
record and a rerun answers them from the cache without calling the model again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import sqlite_utils

from ...core.record import Record
from ...store import judge_store
from ...store import records as store_records
from ...store.db import write
from .client import (
    JudgeAbort,
    JudgeConfig,
    RequestFailed,
    Stats,
    Waiting,
    api_key,
    async_client,
    chat,
    scrub,
)
from .tasks import (
    TASKS,
    OutputError,
    Parsed,
    Task,
    default_template,
    parse,
    render,
    task_for,
    verdict_logprobs,
)

Progress = Callable[[Stats], None]


@dataclass(frozen=True)
class Job:
    rowid: int
    record: Record
    task: Task
    prompt: str
    key: str

    @property
    def names(self) -> tuple[str, ...]:
        return self.task.names(self.record)


def template(config: JudgeConfig, task: str) -> str:
    return config.templates.get(task) or default_template(task)


def start(
    db: sqlite_utils.Database, dataset: str, config: JudgeConfig, mode: str = "online"
) -> str:
    """A new run recording its prompts (every task's under ``--task auto``) and
    parameters; it becomes the dataset's active run."""
    tasks = list(TASKS) if config.task == "auto" else [config.task]
    return judge_store.start_run(
        db,
        dataset,
        config.model,
        config.base_url,
        config.task,
        mode,
        prompts={name: template(config, name) for name in tasks},
        params=config.params(),
    )


def plan(
    db: sqlite_utils.Database, dataset: str, config: JudgeConfig, stats: Stats | None = None
) -> Iterator[Job]:
    """The records to judge, in file order, with their prompts (built lazily)."""
    cache: dict[str, str] = {}
    for stored in store_records.iterate(db, dataset):
        record = stored.record
        task = task_for(record, config.task)
        if task is None or task.needs(record) is not None:
            if stats is not None:
                stats.skipped += 1
            continue
        if config.only_missing and judge_store.has_labels(db, stored.rowid, task.names(record)):
            if stats is not None:
                stats.skipped += 1
            continue
        if task.name not in cache:
            cache[task.name] = template(config, task.name)
        prompt = render(cache[task.name], record)
        yield Job(stored.rowid, record, task, prompt, judge_store.cache_key(config.model, prompt))


def count_records(db: sqlite_utils.Database, dataset: str) -> int:
    return sum(store_records.counts(db, dataset).values())


def correction(error: OutputError) -> str:
    return (
        f"Your reply could not be used: {error}. Reply again with only the JSON object "
        "the instructions ask for, following every rule."
    )


class Writer:
    """Group commit: results are written in one transaction per group, not one each.

    A durable commit costs an fsync (about 3 ms here), which would otherwise pace a
    100,000-record run. Each result is still all-or-nothing (its cached reply, labels
    and facts go in together); groups are flushed when full, every ``FLUSH_SECONDS``,
    and on the way out, Ctrl-C included, so every finished call is kept.
    """

    LIMIT = 64
    FLUSH_SECONDS = 0.5

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db
        self.pending: list[Callable[[], None]] = []

    def add(self, op: Callable[[], None]) -> None:
        self.pending.append(op)
        if len(self.pending) >= self.LIMIT:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        ops, self.pending = self.pending, []
        with write(self.db.conn):
            for op in ops:
                op()

    async def flush_periodically(self) -> None:
        while True:
            await asyncio.sleep(self.FLUSH_SECONDS)
            self.flush()


def save(
    db: sqlite_utils.Database,
    job: Job,
    run_id: str,
    parsed: Parsed,
    model: str,
    response: judge_store.CachedResponse | None,
    logprobs: dict[tuple[str, str], float] | None = None,
) -> None:
    judge_store.save_result(
        db,
        job.rowid,
        run_id,
        job.task.name,
        job.names,
        parsed.layer,
        cache=None if response is None else (job.key, model, response),
        facts=parsed.facts,
        logprobs=logprobs,
    )


async def judge_one(
    writer: Writer,
    client: Any,
    config: JudgeConfig,
    job: Job,
    run_id: str,
    stats: Stats,
    on_wait: Waiting | None = None,
) -> None:
    """Label one record: from the cache when possible, else by asking the model (with
    a corrective follow-up when its reply is malformed). Failures become a record error."""
    db = writer.db
    if config.use_cache:
        hit = judge_store.cached(db, job.key)
        if hit is not None:
            try:
                parsed = parse(job.task, job.record, hit.text)
            except OutputError:
                pass  # a cached reply the current rules reject: ask again
            else:
                writer.add(partial(save, db, job, run_id, parsed, config.model, None))
                stats.cached += 1
                stats.labelled += 1
                return
    messages = [{"role": "user", "content": job.prompt}]
    p_total = c_total = 0
    problem = "no reply"
    for _ in range(config.max_retries + 1):
        try:
            content, p_tok, c_tok, tokens = await chat(client, config, messages, stats, on_wait)
        except RequestFailed as err:
            problem = str(err)
            break
        p_total += p_tok
        c_total += c_tok
        try:
            if content is None:
                raise OutputError("the reply is empty")
            parsed = parse(job.task, job.record, content)
        except OutputError as err:
            problem = scrub(f"invalid output: {err}", config)
            messages = [
                messages[0],
                {"role": "assistant", "content": content or ""},
                {"role": "user", "content": correction(err)},
            ]
            continue
        response = judge_store.CachedResponse(content, p_total, c_total)
        logprobs = verdict_logprobs(job.task, job.record, content, tokens) if tokens else None
        writer.add(partial(save, db, job, run_id, parsed, config.model, response, logprobs))
        stats.labelled += 1
        return
    writer.add(partial(judge_store.add_error, db, job.rowid, run_id, job.task.name, problem))
    stats.errors += 1


async def _run_jobs(
    db: sqlite_utils.Database,
    config: JudgeConfig,
    jobs: Iterator[Job],
    run_id: str,
    stats: Stats,
    on_progress: Progress | None,
    on_wait: Waiting | None = None,
) -> None:
    queue: asyncio.Queue[Job | None] = asyncio.Queue(maxsize=max(1, config.concurrency) * 2)
    workers = max(1, config.concurrency)
    async with async_client(config) as client:

        async def produce() -> None:
            for job in jobs:
                await queue.put(job)
            for _ in range(workers):
                await queue.put(None)

        async def work() -> None:
            while (job := await queue.get()) is not None:
                await judge_one(writer, client, config, job, run_id, stats, on_wait)
                stats.done += 1
                if on_progress is not None:
                    on_progress(stats)

        writer = Writer(db)
        flusher = asyncio.create_task(writer.flush_periodically())
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(produce())
                for _ in range(workers):
                    group.create_task(work())
        finally:
            flusher.cancel()
            writer.flush()  # runs on Ctrl-C too: nothing finished is lost


def run(
    db: sqlite_utils.Database,
    dataset: str,
    config: JudgeConfig,
    on_progress: Progress | None = None,
    on_wait: Waiting | None = None,
) -> tuple[str, Stats]:
    """Judge every record of ``dataset`` in scope. Returns (run id, stats).

    ``on_wait(seconds, why)`` is told of each long wait before a retry (a server's
    ``Retry-After``, a long back-off), so that the caller can show it.

    Raises ``JudgeAbort`` when the endpoint refuses us outright, and lets
    ``KeyboardInterrupt`` through after marking the run interrupted.
    """
    api_key(config)  # fail before a run row is written when there is no key
    stats = Stats(total=count_records(db, dataset))
    run_id = start(db, dataset, config)
    run_jobs(db, config, plan(db, dataset, config, stats), run_id, stats, on_progress, on_wait)
    return run_id, stats


def run_jobs(
    db: sqlite_utils.Database,
    config: JudgeConfig,
    jobs: Iterator[Job],
    run_id: str,
    stats: Stats,
    on_progress: Progress | None,
    on_wait: Waiting | None = None,
) -> None:
    """Run the jobs and record how the run ended, whatever happens (Ctrl-C included)."""
    status = "interrupted"
    try:
        asyncio.run(_run_jobs(db, config, jobs, run_id, stats, on_progress, on_wait))
        status = "finished"
    except JudgeAbort:
        status = "aborted"
        raise
    except BaseExceptionGroup as group:
        aborts = group.subgroup(JudgeAbort)
        if aborts is None:
            raise
        status = "aborted"
        first: BaseException = aborts
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None
    finally:
        judge_store.finish_run(db, run_id, status, stats.as_dict())


def rejudge_record(
    db: sqlite_utils.Database,
    rowid: int,
    model: str,
    base_url: str | None = None,
    task: str = "auto",
    *,
    api_key_env: str = "OPENAI_API_KEY",
    use_cache: bool = False,
    **options: Any,
) -> tuple[str, Stats]:
    """Judge one record again (the TUI's "judge: Re-judge record" command).

    By default the cache is bypassed, since asking again is the point; the fresh
    reply replaces the cached one. Run it in a thread worker with its own connection:
    it blocks for the duration of the call. Returns (run id, stats); ``stats.errors``
    is 1 when the record could not be labelled (the error is in the judge errors).
    """
    config = JudgeConfig(
        model,
        base_url,
        api_key_env=api_key_env,
        task=task,
        use_cache=use_cache,
        concurrency=1,
        **options,
    )
    api_key(config)
    stored = store_records.get(db, rowid)
    chosen = task_for(stored.record, task)
    if chosen is None:
        raise JudgeAbort(f"no judge task fits record {stored.id!r} (task {stored.record.task!r})")
    why = chosen.needs(stored.record)
    if why is not None:
        raise JudgeAbort(f"record {stored.id!r} cannot be judged for {chosen.name}: {why}")
    prompt = render(template(config, chosen.name), stored.record)
    job = Job(rowid, stored.record, chosen, prompt, judge_store.cache_key(model, prompt))
    stats = Stats(total=1)
    run_id = start(db, stored.dataset, replace(config, task=chosen.name))
    run_jobs(db, config, iter([job]), run_id, stats, None)
    return run_id, stats
