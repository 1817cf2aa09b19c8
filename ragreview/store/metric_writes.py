"""Per-record metric rows and incremental dataset aggregates kept in the DB.

``refresh`` runs inside every label/import/settings write transaction: it recomputes
the given records' metrics for the judge and effective layers, rewrites only the rows
whose value changed, and moves the dataset's running sums (``metric_totals``) by the
difference, so one label change costs one record's work whatever the dataset's size.
Large refreshes (import, a variant change) rebuild the sums from the rows instead,
which is exact and cheaper than many small updates.

A record's effective layer is stored only while it has human labels (``metric_layers``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..core import metrics
from ..core.labels import Layer, effective
from ..core.metrics import trace
from ..core.metrics.aggregate import stored_f1
from ..core.record import Record
from . import metric_stats_writes, record_signals, records, settings, source_blob
from .db import write
from .metric_layers import COUNT, LAYERS, SUMS, summed_rows

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite_utils

BULK = 2_000  # refreshes of more records than this rebuild the sums from the rows

Key = tuple[str, str, str]  # (dataset, layer, name)
Key2 = tuple[str, str]  # (layer, name)


def _settings(db: sqlite_utils.Database, dataset: str, cache: dict[str, dict]) -> dict:
    if dataset not in cache:
        cache[dataset] = settings.get_all(db, dataset)
    return cache[dataset]


def _with_source(record: Record, source: str | bytes | None) -> Record:
    """``core.metrics.with_source`` from the stored source (parsed only for the records
    whose family's metrics read it: MT-RAG's): its text, or as ``records.source`` holds
    it, compressed (``store.source_blob``; an older import kept MT-RAG's as text)."""
    if not source or "source" in record.data or metrics.source_format(record) is None:
        return record
    text = source_blob.text(source)
    if text is None:  # (a BLOB some other tool wrote)
        return record
    try:
        return metrics.with_source(record, records.loads(text))
    except ValueError:
        return record


_TRACE_LABELS = ",".join(f"'{n}'" for n in trace.LABELS)


def trace_from_runs(conn: Any, rowids: list[int]) -> set[int]:
    """The records among ``rowids`` whose TRACe labels in the judge layer a judge run
    gave (not the import: its labels keep ``run`` NULL in ``judge_labels``). The raw
    label-list counts a RAGBench file stores (``trace.stats``) describe the imported
    labels, so they apply to the other records only. A run that gives any TRACe label
    on a record covers ``relevant`` and ``utilized`` there (``run_layers``), so one row
    of its tells."""
    marks = ",".join("?" * len(rowids))
    return {
        r
        for (r,) in conn.execute(
            f"SELECT DISTINCT record FROM judge_labels WHERE record IN ({marks}) "
            f"AND name IN ({_TRACE_LABELS}) AND run IS NOT NULL",
            rowids,
        )
    }


Known = Mapping[int, tuple[Record, Layer]]  # rowid -> (record, judge layer) as stored


def _load(
    db: sqlite_utils.Database, rowids: list[int], known: Known | None
) -> list[tuple[int, str, Record, Layer, Layer]]:
    """(rowid, dataset, record, judge, human) for each record; ``known`` records and
    judge layers (the importer has them in memory) are not read back and parsed again."""
    if not known:
        return [
            (s.rowid, s.dataset, _with_source(s.record, s.source), s.judge, s.human)
            for s in records.get_many(db, rowids)
        ]
    marks = ",".join("?" * len(rowids))
    rows = {
        rowid: (dataset, source)
        for rowid, dataset, source in db.conn.execute(
            "SELECT rowid, dataset, CASE WHEN task = 'mtrag' THEN source END FROM records "
            f"WHERE rowid IN ({marks})",
            rowids,
        )
    }
    human = records.human_layers(db, rowids)
    out: list[tuple[int, str, Record, Layer, Layer]] = []
    missing = [r for r in rowids if r not in known]
    for rowid in rowids:
        if rowid in known:
            dataset, source = rows[rowid]
            record, judge = known[rowid]
            out.append((rowid, dataset, _with_source(record, source), judge, human[rowid]))
    if missing:
        out.extend(_load(db, missing, None))
    return out


def refresh(
    db: sqlite_utils.Database,
    rowids: Iterable[int],
    known: Known | None = None,
    on_progress: Callable[[int], None] | None = None,
    *,
    rebuild: bool = False,
) -> None:
    """Recompute stored metrics for these records and adjust the dataset sums.

    Runs in the caller's transaction (it does not commit). ``known`` may give records
    and their judge layers already in memory by rowid (exactly as just stored), to save
    reading them back. ``on_progress(n)`` is told as each batch of n records is done.
    ``rebuild``: rebuild the touched datasets' sums from the rows instead of moving them.
    """

    ids = list(dict.fromkeys(rowids))
    if not ids:
        return
    conn = db.conn
    bulk = rebuild or len(ids) > BULK
    cache: dict[str, dict] = {}
    deltas: dict[Key, list[float]] = {}  # [n, total, total_sq, undefined]
    datasets: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        old: dict[int, dict[tuple[str, str], float | None]] = {r: {} for r in chunk}
        for rec, layer, name, value in conn.execute(
            f"SELECT record, layer, name, value FROM record_metrics WHERE record IN ({marks})",
            chunk,
        ):
            old[rec][(layer, name)] = value
        deletes: list[tuple] = []
        upserts: list[tuple] = []
        stats_rows: list[tuple] = []
        signals: list[record_signals.Signal] = []  # (queue --strategy impact's)
        # (which records held an effective layer: the sums move by effective values,
        # stored or the judge's)
        held = set() if bulk else _effective_held(conn, chunk, old)
        rejudged = trace_from_runs(conn, chunk)
        least = dict(conn.execute(record_signals.least_logprobs(len(chunk)), chunk))
        for rowid, dataset, record, judge_layer, human_layer in _load(db, chunk, known):
            settings = _settings(db, dataset, cache)
            datasets.add(dataset)
            # RAGBench's raw list counts describe the imported file's labels only
            listed = None if rowid in rejudged else judge_layer
            judge_stats: dict[str, Any] = {}
            judge = metrics.record_values(
                record, judge_layer, settings, judge=listed, stats=judge_stats
            )
            layers = {"judge": judge, "stored": metrics.stored_pairs(record, settings)}
            size = record_signals.label_count(judge_layer)
            signals.append((rowid, size, judge, layers["stored"], least.get(rowid)))
            stats_rows.append(
                metric_stats_writes.row(rowid, "judge", judge_stats, stored_f1(record))
            )
            if human_layer:  # (without, the effective layer is the judge's: not stored)
                merged = effective(judge_layer, human_layer)
                effective_stats: dict[str, Any] = {}
                layers["effective"] = metrics.record_values(
                    record, merged, settings, judge=listed, stats=effective_stats
                )
                stats_rows.append(
                    metric_stats_writes.row(rowid, "effective", effective_stats, None)
                )
            new = {(layer, n): v for layer, vals in layers.items() for n, v in vals.items()}
            new[("judge", COUNT)] = 1.0  # keeps the record count in the running sums
            before = old[rowid]
            for key in before.keys() - new.keys():
                deletes.append((rowid, *key))
            for key, value in new.items():
                if key not in before or before[key] != value:
                    upserts.append((rowid, *key, value))
            if not bulk:
                was = _summed(before, rowid in held)
                now = _summed(new, bool(human_layer))
                for key in was.keys() | now.keys():
                    a, b = was.get(key, ABSENT), now.get(key, ABSENT)
                    if a is ABSENT or b is ABSENT or a != b:
                        _move(deltas, (dataset, *key), a, b)
        conn.executemany(
            "DELETE FROM record_metrics WHERE record = ? AND layer = ? AND name = ?", deletes
        )
        conn.executemany(
            "INSERT INTO record_metrics (record, layer, name, value) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (record, layer, name) DO UPDATE SET value = excluded.value",
            upserts,
        )
        metric_stats_writes.put(conn, chunk, stats_rows)
        record_signals.put(conn, signals)
        if on_progress is not None:
            on_progress(len(chunk))
    if bulk:
        for dataset in datasets:
            rebuild_totals(db, dataset)
        return
    # A dataset without sums has rows from an older build (or none): moving sums that
    # are not there would leave them partial, so recompute it whole instead.
    unsummed = {d for d in datasets if not has_totals(conn, d)}
    add_totals(
        conn,
        [
            (*key, int(d[0]), d[1], d[2], int(d[3]))
            for key, d in deltas.items()
            if any(d) and key[0] not in unsummed
        ],
    )
    for dataset in sorted(unsummed):
        recompute(db, dataset)


def _effective_held(conn: Any, rowids: list[int], old: Mapping[int, Mapping]) -> set[int]:
    """The records among ``rowids`` whose effective layer is stored as their rows stand
    (read before they are rewritten): those with effective metric rows or an effective
    stats row (a labelled record whose effective layer has no metric), and those written
    before ``metric_stats`` existed (m012: every record's effective rows were stored then,
    even an empty layer)."""
    held = {r for r, rows in old.items() if any(layer == "effective" for layer, _ in rows)}
    marks = ",".join("?" * len(rowids))
    stats: dict[int, set[str]] = {r: set() for r in rowids}
    for rowid, layer in conn.execute(
        f"SELECT record, layer FROM metric_stats WHERE record IN ({marks})", rowids
    ):
        stats[rowid].add(layer)
    return held | {r for r, layers in stats.items() if "effective" in layers or not layers}


def _summed(rows: Mapping[tuple[str, str], float | None], held: bool) -> dict[Key2, Any]:
    """A record's values that the running sums count, (layer, name) -> value: its judge
    and effective rows, the judge's standing for the effective layer where it is not
    ``held`` (stored)."""
    out = {key: v for key, v in rows.items() if key[0] in LAYERS}
    if not held:
        out.update({("effective", n): v for (layer, n), v in rows.items() if layer == "judge"})
        out.pop(("effective", COUNT), None)
    return out


def has_totals(conn: Any, dataset: str) -> bool:
    """The dataset's running sums exist (one indexed look-up)."""
    sql = "SELECT 1 FROM metric_totals WHERE dataset = ? LIMIT 1"
    return conn.execute(sql, (dataset,)).fetchone() is not None


def recompute(db: sqlite_utils.Database, dataset: str) -> None:
    """Recompute every record's metric rows of a dataset and rebuild its sums, in the
    caller's transaction: for data written by an older build (no sums, or rows made
    under other rules; migration m009 drops the sums for that reason)."""
    rowids = [
        r for (r,) in db.conn.execute("SELECT rowid FROM records WHERE dataset = ?", (dataset,))
    ]
    refresh(db, rowids, rebuild=True)


def put_setting(
    db: sqlite_utils.Database,
    dataset: str,
    name: str,
    value: Any,
    on_progress: Callable[[int], None] | None = None,
) -> bool:
    """Set a dataset setting; returns False when it already had that value.

    A changed setting (a metric variant, K) rewrites the metric rows and sums it decides
    in the same transaction, from the records' stats (``metric_stats_writes.apply``: SQL, no
    record read). A dataset stored before those stats existed is recomputed record by
    record instead, which writes them; ``on_progress(n)`` is told as batches of records
    are done.
    """
    value = settings.check(name, value)
    if name in settings.OTHERS:  # no metric reads it: nothing to recompute
        with write(db.conn) as conn:
            if settings.others(db, dataset)[name] == value:
                return False
            settings.store(conn, dataset, name, value)
        return True
    with write(db.conn) as conn:
        old = settings.get_all(db, dataset)[name]
        if old == value:  # stored metrics already use it
            return False
        settings.store(conn, dataset, name, value)
        if (
            name in metric_stats_writes.SQL_SETTINGS
            and has_totals(conn, dataset)
            and metric_stats_writes.complete(conn, dataset)
        ):
            metric_stats_writes.apply(conn, dataset, name, value, old)
            record_signals.forget(conn, dataset)  # (rebuilt from the rows when next drawn)
            if on_progress is not None:  # every record done at once
                sql = "SELECT count(*) FROM records WHERE dataset = ?"
                on_progress(conn.execute(sql, (dataset,)).fetchone()[0])
            return True
        rowids = [
            r for (r,) in conn.execute("SELECT rowid FROM records WHERE dataset = ?", (dataset,))
        ]
        refresh(db, rowids, on_progress=on_progress, rebuild=True)
    return True


ADD_TOTALS = (
    "INSERT INTO metric_totals (dataset, layer, name, n, total, total_sq, undefined) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dataset, layer, name) DO UPDATE SET "
    "n = n + excluded.n, total = total + excluded.total, "
    "total_sq = total_sq + excluded.total_sq, undefined = undefined + excluded.undefined"
)


def add_totals(conn: Any, rows: list[tuple]) -> None:
    """Add ``(dataset, layer, name, n, total, total_sq, undefined)`` increments."""
    conn.executemany(ADD_TOTALS, rows)


ABSENT = object()  # no row at all, as opposed to a row holding NULL (undefined)


def _move(deltas: dict[Key, list[float]], key: Key, old: Any, new: Any) -> None:
    d = deltas.setdefault(key, [0, 0.0, 0.0, 0])
    if old is None:
        d[3] -= 1
    elif old is not ABSENT:
        d[0] -= 1
        d[1] -= old
        d[2] -= old * old
    if new is None:
        d[3] += 1
    elif new is not ABSENT:
        d[0] += 1
        d[1] += new
        d[2] += new * new


def rebuild_totals(db: sqlite_utils.Database, dataset: str) -> None:
    """Recompute a dataset's running sums from its rows (exact; a full scan)."""
    conn = db.conn
    conn.execute("DELETE FROM metric_totals WHERE dataset = ?", (dataset,))
    conn.execute(
        "INSERT INTO metric_totals (dataset, layer, name, n, total, total_sq, undefined) "
        f"SELECT ?, layer, name, {SUMS} FROM ({summed_rows('r.dataset = ?')}) "
        "GROUP BY layer, name",
        (dataset, dataset),
    )


# -- reading ------------------------------------------------------------------------


def ensure(db: sqlite_utils.Database, dataset: str) -> None:
    """Compute the metric rows of a dataset whose sums are missing (stored before
    metrics existed, or before m009 changed the rules): one indexed look-up when there
    is nothing to do."""
    conn = db.conn
    if has_totals(conn, dataset):
        return
    if conn.execute("SELECT 1 FROM records WHERE dataset = ? LIMIT 1", (dataset,)).fetchone():
        with write(conn):
            recompute(db, dataset)
