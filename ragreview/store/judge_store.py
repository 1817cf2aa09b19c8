"""What `ragreview judge` keeps: response cache, runs, per-record errors, batch jobs,
and the one way the judge layer is rewritten by a judge run.

Nothing here ever stores an API key: the cache holds the model's text and token counts,
runs hold the model name and the endpoint without credentials.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from ..core.labels import Layer
from . import metric_writes, run_layers, run_signals, target_rows
from .db import write
from .records import dumps, loads, now

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils


def cache_key(model: str, prompt: str) -> str:
    """sha256 over the model and the prompt, NUL-separated so that no pair collides."""
    import hashlib  # (loads OpenSSL: not at every start, issue 27)

    return hashlib.sha256(f"{model}\0{prompt}".encode()).hexdigest()


def public_url(url: str | None) -> str | None:
    """An endpoint without user:password, so credentials in a URL are never stored."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass(frozen=True)
class CachedResponse:
    """A judge reply kept for the same model and prompt, with its token counts."""

    text: str
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class JudgeError:
    """A judge failure on one record in one run, and whether a later run fixed it."""

    id: int
    record: str  # record id
    dataset: str
    run: str
    task: str
    model: str
    message: str
    at: str
    resolved: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": "judge_error",
            "record": self.record,
            "run": self.run,
            "task": self.task,
            "model": self.model,
            "message": self.message,
            "at": self.at,
            "resolved": self.resolved,
        }


# -- cache --------------------------------------------------------------------------


def cached(db: sqlite_utils.Database, key: str) -> CachedResponse | None:
    row = db.conn.execute(
        "SELECT response, prompt_tokens, completion_tokens FROM judge_cache WHERE key = ?", (key,)
    ).fetchone()
    return None if row is None else CachedResponse(*row)


def _put_cache(conn: sqlite3.Connection, key: str, model: str, response: CachedResponse) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO judge_cache "
        "(key, model, response, prompt_tokens, completion_tokens, at) VALUES (?, ?, ?, ?, ?, ?)",
        (key, model, response.text, response.prompt_tokens, response.completion_tokens, now()),
    )


# -- runs ---------------------------------------------------------------------------


def start_run(
    db: sqlite_utils.Database,
    dataset: str,
    model: str,
    base_url: str | None,
    task: str,
    mode: str = "online",
    *,
    prompts: Mapping[str, str] | None = None,
    params: Mapping[str, Any] | None = None,
) -> str:
    """A new run, which becomes the dataset's active run (its labels go on top of the
    judge layer as they arrive). ``prompts`` are the templates by task (stored with
    their hash), ``params`` the request parameters: never a key or header."""
    run_id = f"{now()[:19].replace(':', '')}-{uuid.uuid4().hex[:8]}"
    prompt = dumps(dict(sorted(prompts.items()))) if prompts else None
    import hashlib  # (loads OpenSSL: not at every start, issue 27)

    digest = hashlib.sha256(prompt.encode()).hexdigest() if prompt else None
    with write(db.conn) as conn:
        run_layers.keep_import(conn, dataset)
        before = run_layers.active(db, dataset)
        latest = conn.execute(
            "SELECT id FROM judge_runs WHERE dataset = ? ORDER BY started DESC, id DESC LIMIT 1",
            (dataset,),
        ).fetchone()
        conn.execute(
            "INSERT INTO judge_runs (id, dataset, model, base_url, task, mode, started, "
            "prompt_hash, prompt, params) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                dataset,
                model,
                public_url(base_url),
                task,
                mode,
                now(),
                digest,
                prompt,
                dumps(dict(params or {})),
            ),
        )
        run_layers.set_active(conn, dataset, run_id)
        if before is not None and latest is not None and before != latest[0]:
            # an older run was in use: below the new run the layer is now the latest
            # runs', as `runs use` would build it
            run_layers.materialise(db, dataset)
            rowids = [
                r
                for (r,) in conn.execute("SELECT rowid FROM records WHERE dataset = ?", (dataset,))
            ]
            metric_writes.refresh(db, rowids, rebuild=True)
    return run_id


def finish_run(
    db: sqlite_utils.Database, run_id: str, status: str, stats: Mapping[str, int]
) -> None:
    """Record the run's outcome and totals (requests, cached, labelled, errors, tokens)."""
    cols = ("requests", "cached", "labelled", "errors", "prompt_tokens", "completion_tokens")
    with write(db.conn) as conn:
        conn.execute(
            f"UPDATE judge_runs SET status = ?, finished = ?, "
            f"{', '.join(f'{c} = ?' for c in cols)} WHERE id = ?",
            (status, now(), *(int(stats.get(c, 0)) for c in cols), run_id),
        )


def get_run(db: sqlite_utils.Database, run_id: str) -> dict[str, Any] | None:
    cur = db.conn.execute("SELECT * FROM judge_runs WHERE id = ?", (run_id,))
    row = cur.fetchone()
    return None if row is None else dict(zip([d[0] for d in cur.description], row))


def last_run(db: sqlite_utils.Database, dataset: str) -> dict[str, Any] | None:
    """The dataset's latest judge run (the TUI's default model and endpoint)."""
    row = db.conn.execute(
        "SELECT id FROM judge_runs WHERE dataset = ? AND mode != 'import' "
        "ORDER BY started DESC LIMIT 1",
        (dataset,),
    ).fetchone()
    return None if row is None else get_run(db, row[0])


# -- the judge layer ----------------------------------------------------------------


def save_result(
    db: sqlite_utils.Database,
    rowid: int,
    run_id: str,
    task: str,
    names: Sequence[str],
    layer: Layer,
    *,
    cache: tuple[str, str, CachedResponse] | None = None,
    facts: list[list[Any]] | None = None,
    logprobs: Mapping[tuple[str, str], float] | None = None,
) -> None:
    """Store the run's verdict on a record for ``names`` (its layer, with the
    log-probability of each verdict where known) and, while the run is active, put it
    on top of the judge layer, in one transaction.

    The cached response (key, model, response), new atomic facts and the labels commit
    together, so an interrupted run never leaves a response cached without its labels
    or labels without their facts. Human labels and other runs are not touched.
    """
    rows = [
        (run_id, rowid, name, target, dumps(value), (logprobs or {}).get((name, target)))
        for name, targets in layer.items()
        for target, value in targets.items()
    ]
    marks = ",".join("?" * len(names))
    with write(db.conn) as conn:
        if cache is not None:
            _put_cache(conn, *cache)
        if facts is not None:
            (data,) = conn.execute("SELECT data FROM records WHERE rowid = ?", (rowid,)).fetchone()
            obj = loads(data)
            obj["facts"] = facts
            # content_hash stays: it fingerprints the imported file, and judge-made facts
            # are judge output, like labels, replaced again by a re-import.
            conn.execute("UPDATE records SET data = ? WHERE rowid = ?", (dumps(obj), rowid))
            target_rows.store(conn, [rowid])  # (a reviewed record's facts are targets)
        conn.execute(
            f"DELETE FROM run_labels WHERE run = ? AND record = ? AND name IN ({marks})",
            (run_id, rowid, *names),
        )
        conn.executemany(
            "INSERT INTO run_labels (run, record, name, target, value, logprob) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
        active = conn.execute(
            "SELECT 1 FROM judge_runs j JOIN settings s ON s.dataset = j.dataset "
            "AND s.name = ? AND s.value = ? WHERE j.id = ?",
            (run_layers.SETTING, dumps(run_id), run_id),
        ).fetchone()
        if active is not None:
            conn.execute(
                f"DELETE FROM judge_labels WHERE record = ? AND name IN ({marks})",
                (rowid, *names),
            )
            conn.executemany(
                "INSERT INTO judge_labels (record, name, target, value, run) "
                "VALUES (?, ?, ?, ?, ?)",
                [(rowid, name, target, value, run_id) for _, _, name, target, value, _ in rows],
            )
        conn.execute(
            "UPDATE judge_errors SET resolved = ? WHERE record = ? AND task = ? AND resolved IS NULL",
            (run_id, rowid, task),
        )
        run_signals.put(db, [rowid])  # (its run labels changed: queue's run strategies)
        metric_writes.refresh(db, [rowid])


def has_labels(db: sqlite_utils.Database, rowid: int, names: Iterable[str]) -> bool:
    names = list(names)
    marks = ",".join("?" * len(names))
    row = db.conn.execute(
        f"SELECT 1 FROM judge_labels WHERE record = ? AND name IN ({marks}) LIMIT 1",
        (rowid, *names),
    ).fetchone()
    return row is not None


def label_runs(db: sqlite_utils.Database, rowid: int) -> dict[str, str | None]:
    """The run that wrote each of the record's judge labels (None when imported)."""
    return {
        name: run
        for name, run in db.conn.execute(
            "SELECT name, max(run) FROM judge_labels WHERE record = ? GROUP BY name", (rowid,)
        )
    }


# -- errors -------------------------------------------------------------------------


def add_error(db: sqlite_utils.Database, rowid: int, run_id: str, task: str, message: str) -> None:
    with write(db.conn) as conn:
        conn.execute(
            "INSERT INTO judge_errors (record, run, task, message, at) VALUES (?, ?, ?, ?, ?)",
            (rowid, run_id, task, message, now()),
        )


def iter_errors(
    db: sqlite_utils.Database,
    *,
    dataset: str | None = None,
    record: int | None = None,
    unresolved: bool = False,
) -> list[JudgeError]:
    sql = (
        "SELECT e.id, r.id, r.dataset, e.run, e.task, j.model, e.message, e.at, e.resolved "
        "FROM judge_errors e JOIN records r ON r.rowid = e.record "
        "JOIN judge_runs j ON j.id = e.run WHERE 1"
    )
    params: list[Any] = []
    if dataset is not None:
        sql += " AND r.dataset = ?"
        params.append(dataset)
    if record is not None:
        sql += " AND e.record = ?"
        params.append(record)
    if unresolved:
        sql += " AND e.resolved IS NULL"
    return [JudgeError(*row) for row in db.conn.execute(sql + " ORDER BY e.id", params)]


# -- batches ------------------------------------------------------------------------


def add_batch(
    db: sqlite_utils.Database,
    batch_id: str,
    run_id: str,
    input_file: str,
    status: str,
    items: Iterable[tuple[str, int, str, str]],
) -> None:
    """A submitted batch and its items: (custom_id, record rowid, task, cache key)."""
    with write(db.conn) as conn:
        conn.execute(
            "INSERT INTO judge_batches (id, run, input_file, status, submitted) "
            "VALUES (?, ?, ?, ?, ?)",
            (batch_id, run_id, input_file, status, now()),
        )
        conn.executemany(
            "INSERT INTO judge_batch_items (batch, custom_id, record, task, cache_key) "
            "VALUES (?, ?, ?, ?, ?)",
            [(batch_id, *item) for item in items],
        )


def pending_batches(db: sqlite_utils.Database, dataset: str) -> list[dict[str, Any]]:
    cur = db.conn.execute(
        "SELECT b.id, b.run, b.status, j.model, j.task FROM judge_batches b "
        "JOIN judge_runs j ON j.id = b.run WHERE j.dataset = ? AND b.collected IS NULL "
        "ORDER BY b.submitted",
        (dataset,),
    )
    return [dict(zip(("id", "run", "status", "model", "task"), row)) for row in cur]


def batch_items(db: sqlite_utils.Database, batch_id: str) -> dict[str, tuple[int, str, str]]:
    return {
        cid: (rec, task, key)
        for cid, rec, task, key in db.conn.execute(
            "SELECT custom_id, record, task, cache_key FROM judge_batch_items WHERE batch = ?",
            (batch_id,),
        )
    }


def set_batch_status(
    db: sqlite_utils.Database, batch_id: str, status: str, collected: bool = False
) -> None:
    with write(db.conn) as conn:
        conn.execute(
            "UPDATE judge_batches SET status = ?, collected = ? WHERE id = ?",
            (status, now() if collected else None, batch_id),
        )
