"""Judge runs as label layers (docs/agreement.md, Judge runs).

Every judge run (``ragreview judge``, a batch, a record re-judged in the TUI, or the
labels an import brings) keeps its labels in ``run_labels``; re-judging never deletes
an earlier run. One run per dataset is *active* (setting ``judge.run``), and
``judge_labels`` is the materialised judge layer that everything else reads: the
active run's labels and, for what it did not label, the latest other run that did.

A run *covers* a label on a record when it gave that label there, or when the label
has a catalogue default (``relevant``, ``utilized``: absent means false) and the run
gave another label of its family there: a trace run that found no relevant sentence
still said "none is relevant".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.errors import RagreviewError
from ..core.labels import CATALOGUE
from . import bulk, metric_writes, settings
from .db import write
from .records import dumps, label_value, loads, now

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

SETTING = "judge.run"


def _siblings() -> list[tuple[str, str]]:
    """(label with a default, a label of its family): giving the second covers the first."""
    return [
        (name, other)
        for name, spec in CATALOGUE.items()
        if spec.default is not None
        for other, o in CATALOGUE.items()
        if o.family == spec.family
    ]


def _siblings_sql() -> str:
    return "VALUES " + ", ".join(f"('{a}', '{b}')" for a, b in _siblings())


def runs_disagree_sql() -> str:
    """A record on which two runs give an item different values (an absent defaulted label
    counting as its default where the run covers it). ``r`` is the records row. Built when
    asked, not at import, so a family registered later (docs/contributing.md) counts too."""
    defaults_sql = "VALUES " + ", ".join(
        f"('{n}', '{dumps(s.default)}')" for n, s in CATALOGUE.items() if s.default is not None
    )
    return (
        "(EXISTS (SELECT 1 FROM run_labels a JOIN run_labels b ON b.record = a.record "
        "AND b.name = a.name AND b.target = a.target AND b.run > a.run "
        "WHERE a.record = r.rowid AND b.value != a.value) "
        "OR EXISTS (SELECT 1 FROM run_labels a "
        f"JOIN ({defaults_sql}) d ON d.column1 = a.name AND a.value != d.column2 "
        f"JOIN ({_siblings_sql()}) s ON s.column1 = a.name "
        "JOIN run_labels b ON b.record = a.record AND b.run != a.run AND b.name = s.column2 "
        "WHERE a.record = r.rowid AND NOT EXISTS (SELECT 1 FROM run_labels c "
        "WHERE c.run = b.run AND c.record = a.record AND c.name = a.name "
        "AND c.target = a.target)))"
    )


def import_run_id(dataset: str) -> str:
    """The id of the run that holds a dataset's imported judge labels."""
    import hashlib  # (loads OpenSSL: not at every start, issue 27)

    return "import-" + hashlib.sha256(dataset.encode()).hexdigest()[:8]


def covered(names: Any) -> set[str]:
    """The label names a run covers on a record where it gave ``names``."""
    given = set(names)
    return given | {a for a, b in _siblings() if b in given}


# -- which run is active ------------------------------------------------------------


def active(db: sqlite_utils.Database, dataset: str) -> str | None:
    row = db.conn.execute(
        "SELECT value FROM settings WHERE dataset = ? AND name = ?", (dataset, SETTING)
    ).fetchone()
    return None if row is None else loads(row[0])


def set_active(conn: Any, dataset: str, run_id: str) -> None:
    """Record the active run in the caller's transaction (the judge layer must follow:
    ``use`` rebuilds it; a new run that becomes active writes its labels on top)."""
    settings.store(conn, dataset, SETTING, run_id)


def ensure_import_run(conn: Any, dataset: str, source: str | None) -> str:
    """The dataset's import run, created on the first import that brings judge labels."""
    run_id = import_run_id(dataset)
    conn.execute(
        "INSERT OR IGNORE INTO judge_runs (id, dataset, model, base_url, task, mode, status, "
        "started, finished, params) VALUES (?, ?, 'import', NULL, 'import', 'import', "
        "'finished', ?, ?, ?)",
        (run_id, dataset, now(), now(), dumps({"source": source})),
    )
    return run_id


def _others(conn: Any, dataset: str) -> bool:
    """The dataset has a run besides its import run."""
    return (
        conn.execute(
            "SELECT 1 FROM judge_runs WHERE dataset = ? AND id != ? LIMIT 1",
            (dataset, import_run_id(dataset)),
        ).fetchone()
        is not None
    )


def _implicit(conn: Any, dataset: str, run_id: str) -> bool:
    """The import run's labels are still only in ``judge_labels``: while it is the
    dataset's only run the two are the same, so an import writes its labels once
    (``store_import``); the first other run copies them (``keep_import``)."""
    return (
        run_id == import_run_id(dataset)
        and conn.execute("SELECT 1 FROM run_labels WHERE run = ? LIMIT 1", (run_id,)).fetchone()
        is None
        and not _others(conn, dataset)
    )


def keep_import(conn: Any, dataset: str) -> None:
    """Before another run starts: give the import run its own copy of its labels."""
    run_id = import_run_id(dataset)
    if _implicit(conn, dataset, run_id):
        conn.execute(
            "INSERT INTO run_labels (run, record, name, target, value) "
            "SELECT ?, j.record, j.name, j.target, j.value FROM judge_labels j "
            "JOIN records r ON r.rowid = j.record WHERE r.dataset = ? AND j.run IS NULL",
            (run_id, dataset),
        )
        _forget_run_signals(conn, "SELECT rowid FROM records WHERE dataset = ?", (dataset,))


def store_import(
    conn: Any, dataset: str, source: str | None, replaced: list[int], labelled: list[int]
) -> None:
    """Keep the import run's layer in step with an import batch (caller's transaction):
    ``replaced`` records lose their earlier imported labels, ``labelled`` ones take
    what the importer has just written to ``judge_labels`` for them. While the import
    is the only run, ``judge_labels`` is its layer and nothing is copied."""
    run_id = import_run_id(dataset)
    if labelled:
        ensure_import_run(conn, dataset, source)
        current = conn.execute(
            "SELECT 1 FROM settings WHERE dataset = ? AND name = ?", (dataset, SETTING)
        ).fetchone()
        if current is None:
            set_active(conn, dataset, run_id)
    if not (replaced or labelled) or _implicit(conn, dataset, run_id):
        return
    conn.executemany(
        "DELETE FROM run_labels WHERE run = ? AND record = ?", [(run_id, r) for r in replaced]
    )
    conn.execute(
        "INSERT INTO run_labels (run, record, name, target, value) "
        "SELECT ?, record, name, target, value FROM judge_labels "
        "WHERE record IN (SELECT value FROM json_each(?))",
        (run_id, dumps(labelled)),
    )
    _forget_run_signals(conn, "SELECT value FROM json_each(?)", (dumps([*replaced, *labelled]),))


def _forget_run_signals(conn: Any, records_sql: str, params: tuple) -> None:
    """Drop the queue's run signals (store.run_signals) of records whose run labels were
    just rewritten in bulk: a draw recomputes them."""
    conn.execute(f"DELETE FROM record_run_signals WHERE record IN ({records_sql})", params)


def after_import(db: sqlite_utils.Database, dataset: str) -> None:
    """The importer replaces re-imported records' judge labels with the file's; where
    the dataset has judge runs besides its import, rebuild the layer from the runs
    instead (caller's transaction) so the active run stays on top."""
    if not _others(db.conn, dataset):
        return
    materialise(db, dataset)
    rowids = [
        r for (r,) in db.conn.execute("SELECT rowid FROM records WHERE dataset = ?", (dataset,))
    ]
    metric_writes.refresh(db, rowids, rebuild=True)  # exact sums, one pass


def adopt(conn: Any, dataset: str) -> None:
    """Make a judge layer written without runs (``ragreview merge`` copies the sources'
    judge layer) into runs, in the caller's transaction: labels without a run go to the
    import run, labels of a run this DB does not describe get a run row of unknown model."""
    if conn.execute(
        "SELECT 1 FROM judge_labels j JOIN records r ON r.rowid = j.record "
        "WHERE r.dataset = ? AND j.run IS NULL LIMIT 1",
        (dataset,),
    ).fetchone():
        ensure_import_run(conn, dataset, None)
    conn.execute(
        "INSERT OR IGNORE INTO judge_runs (id, dataset, model, task, mode, status, started) "
        "SELECT DISTINCT j.run, ?1, 'unknown', 'unknown', 'import', 'finished', '' "
        "FROM judge_labels j JOIN records r ON r.rowid = j.record "
        "WHERE r.dataset = ?1 AND j.run IS NOT NULL",
        (dataset,),
    )
    conn.execute(
        "INSERT OR IGNORE INTO run_labels (run, record, name, target, value) "
        "SELECT coalesce(j.run, ?), j.record, j.name, j.target, j.value "
        "FROM judge_labels j JOIN records r ON r.rowid = j.record WHERE r.dataset = ?",
        (import_run_id(dataset), dataset),
    )
    latest = conn.execute(
        "SELECT j.id FROM judge_runs j WHERE j.dataset = ? AND EXISTS "
        "(SELECT 1 FROM run_labels l WHERE l.run = j.id) ORDER BY j.started DESC, j.id DESC",
        (dataset,),
    ).fetchone()
    current = conn.execute(
        "SELECT value FROM settings WHERE dataset = ? AND name = ?", (dataset, SETTING)
    ).fetchone()
    known = (
        current is not None
        and conn.execute(
            "SELECT 1 FROM judge_runs WHERE id = ? AND dataset = ?", (loads(current[0]), dataset)
        ).fetchone()
    )
    if latest is not None and not known:
        set_active(conn, dataset, latest[0])


def resolve(db: sqlite_utils.Database, dataset: str, text: str) -> str:
    """A run id of the dataset from its id or a unique prefix of it (``import`` names
    the import run)."""
    ids = [i for (i,) in db.conn.execute("SELECT id FROM judge_runs WHERE dataset = ?", (dataset,))]
    if text in ids:
        return text
    found = [i for i in ids if i.startswith(text)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise RagreviewError(f"no judge run {text!r} in dataset {dataset!r} (see `ragreview runs`)")
    raise RagreviewError(f"{text!r} names several runs ({', '.join(found)}): give more of the id")


# -- the materialised judge layer ---------------------------------------------------


def _fold_order(db: sqlite_utils.Database, dataset: str, on_top: str | None) -> list[str]:
    ids = [
        i
        for (i,) in db.conn.execute(
            "SELECT id FROM judge_runs WHERE dataset = ? ORDER BY started, id", (dataset,)
        )
    ]
    if on_top in ids:
        ids.remove(on_top)
        ids.append(on_top)
    return ids


def materialise(db: sqlite_utils.Database, dataset: str) -> None:
    """Rebuild the dataset's ``judge_labels`` from the runs, in the caller's
    transaction: each run in time order replaces what it covers, the active run last."""
    conn = db.conn
    conn.execute(
        "DELETE FROM judge_labels WHERE record IN (SELECT rowid FROM records WHERE dataset = ?)",
        (dataset,),
    )
    for run_id in _fold_order(db, dataset, active(db, dataset)):
        conn.execute(
            "DELETE FROM judge_labels WHERE record IN (SELECT record FROM run_labels "
            "WHERE run = ?1) AND (EXISTS (SELECT 1 FROM run_labels x WHERE x.run = ?1 "
            "AND x.record = judge_labels.record AND x.name = judge_labels.name) "
            f"OR EXISTS (SELECT 1 FROM ({_siblings_sql()}) s JOIN run_labels x ON x.run = ?1 "
            "AND x.record = judge_labels.record AND x.name = s.column2 "
            "WHERE s.column1 = judge_labels.name))",
            (run_id,),
        )
        conn.execute(  # imported labels carry no run in judge_labels (as before runs)
            "INSERT INTO judge_labels (record, name, target, value, run) "
            "SELECT record, name, target, value, nullif(run, ?) FROM run_labels WHERE run = ?",
            (import_run_id(dataset), run_id),
        )


def use(
    db: sqlite_utils.Database,
    dataset: str,
    run_id: str,
    on_progress: Callable[[int], None] | None = None,
) -> bool:
    """Make ``run_id`` the dataset's active run: the judge layer is rebuilt and every
    record's metrics refreshed in one transaction. The human layer is not touched.
    Returns False when the run was already active."""
    with write(db.conn) as conn:
        if active(db, dataset) == run_id:
            return False
        set_active(conn, dataset, run_id)
        materialise(db, dataset)
        rowids = [
            r for (r,) in conn.execute("SELECT rowid FROM records WHERE dataset = ?", (dataset,))
        ]
        metric_writes.refresh(db, rowids, on_progress=on_progress, rebuild=True)
    return True


# -- reading ------------------------------------------------------------------------

_RUN_COLUMNS = (
    "id, model, base_url, task, mode, status, started, finished, prompt_hash, params, "
    "requests, cached, labelled, errors, prompt_tokens, completion_tokens"
)


def run_params(db: sqlite_utils.Database, dataset: str) -> list[dict[str, Any]]:
    """The dataset's runs in time order, each as its ``id`` and ``params`` only: what
    finding a run's repeats needs, without ``runs``' label counts (a scan of every
    record's labels)."""
    return [
        {"id": run_id, "params": loads(params) if params else {}}
        for run_id, params in db.conn.execute(
            "SELECT id, params FROM judge_runs WHERE dataset = ? ORDER BY started, id", (dataset,)
        )
    ]


def runs(db: sqlite_utils.Database, dataset: str) -> list[dict[str, Any]]:
    """The dataset's runs in time order, each with its label and record counts and
    whether it is the active one."""
    current = active(db, dataset)
    out = []
    cur = db.conn.execute(
        f"SELECT {_RUN_COLUMNS} FROM judge_runs WHERE dataset = ? ORDER BY started, id",
        (dataset,),
    )
    names = [d[0] for d in cur.description]
    for row in cur.fetchall():
        run = dict(zip(names, row))
        run["params"] = loads(run["params"]) if run["params"] else {}
        if _implicit(db.conn, dataset, run["id"]):
            labels, records, with_logprob = db.conn.execute(
                "SELECT count(*), count(DISTINCT j.record), 0 FROM judge_labels j "
                "JOIN records r ON r.rowid = j.record WHERE r.dataset = ? AND j.run IS NULL",
                (dataset,),
            ).fetchone()
        else:
            labels, records, with_logprob = db.conn.execute(
                "SELECT count(*), count(DISTINCT record), count(logprob) FROM run_labels "
                "WHERE run = ?",
                (run["id"],),
            ).fetchone()
        run.update(
            labels=labels, records=records, logprobs=with_logprob, active=run["id"] == current
        )
        out.append(run)
    return out


def layers(
    db: sqlite_utils.Database, dataset: str, run_id: str, rowids: list[int]
) -> dict[int, dict]:
    """The run's label layer on each of these records it labelled (others are left out)."""
    out: dict[int, dict[str, dict[str, Any]]] = {}
    sql = "SELECT record, name, target, value FROM run_labels WHERE run = ? AND record IN "
    key: Any = run_id
    if _implicit(db.conn, dataset, run_id):  # every judge label is the import's
        sql = "SELECT record, name, target, value FROM judge_labels WHERE ? AND record IN "
        key = 1
    for rec, name, target, value in bulk.rows_in(db.conn, sql + "({ids})", rowids, key):
        out.setdefault(rec, {}).setdefault(name, {})[target] = label_value(value)
    return out


def disagreements(db: sqlite_utils.Database, rowid: int) -> set[tuple[str, str]]:
    """The record's items (label, target) to which two runs give different values, an
    absent defaulted label counting as its default where the run covers it."""
    by_run: dict[str, dict[tuple[str, str], str]] = {}
    for run, name, target, value in db.conn.execute(
        "SELECT run, name, target, value FROM run_labels WHERE record = ?", (rowid,)
    ):
        by_run.setdefault(run, {})[(name, target)] = value
    if len(by_run) < 2:
        return set()
    items = {item for given in by_run.values() for item in given}
    out = set()
    for name, target in items:
        default = CATALOGUE[name].default if name in CATALOGUE else None
        seen = set()
        for given in by_run.values():
            if (name, target) in given:
                seen.add(given[(name, target)])
            elif default is not None and name in covered(n for n, _ in given):
                seen.add(dumps(default))
        if len(seen) > 1:
            out.add((name, target))
    return out
