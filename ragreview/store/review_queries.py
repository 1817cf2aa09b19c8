"""Queries behind ``agreement``, ``sample`` and gold-set export.

Reviewed records with their judge, human and blind-pass layers; seeded review
samples; the review metadata written into a gold set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # sqlite_utils imports click: keep `import ragreview.store` light
    import sqlite3

    import sqlite_utils

from ..core import sampling
from ..core.agreement_report import Reviewed
from ..core.errors import RagreviewError
from ..core.one_ahead import one_ahead
from ..core.record_targets import RecordTargets, StoredTargets
from . import bulk, label_reads, target_rows
from .db import write
from .history import LABEL_KINDS
from .read_ahead import ReadAhead, file_of
from .records import StoredRecord, data_texts, dumps, loads, now

BLIND = "blind"


def blind_layers(db: sqlite_utils.Database, rowids: list[int]) -> dict[int, dict[str, dict]]:
    """Per record, the fold of its blind-pass label events (what the reviewer said
    while the judge's labels were hidden). Records without a blind pass are absent."""
    out: dict[int, dict[str, dict]] = {}
    kinds = ",".join("?" * len(LABEL_KINDS))
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for record, name, target, new in db.conn.execute(
            f"SELECT record, name, target, new FROM events WHERE pass = ? AND kind IN ({kinds}) "
            f"AND record IN ({marks}) ORDER BY id",
            [BLIND, *LABEL_KINDS, *chunk],
        ):
            layer = out.setdefault(record, {})
            if new is None:
                layer.get(name, {}).pop(target, None)
            else:
                layer.setdefault(name, {})[target] = loads(new)
    return out


def iter_reviewed(
    db: sqlite_utils.Database, dataset: str, only: set[int] | None = None, *, batch: int = 500
) -> Iterator[Reviewed]:
    """The dataset's reviewed records (those in ``only`` when given, a set of rowids)
    with their layers and blind passes, in file order, read a page at a time: a
    report over them keeps one page in memory, not all of them.

    Each record comes as its label targets only: the label counts need nothing else
    of it. They are its stored targets (``target_rows``, ``StoredTargets``), or where
    it has none, read from its data without building a ``Record`` (``RecordTargets``):
    parsing every reviewed record was most of the time of ``agreement``."""
    rowids = [
        r
        for (r,) in db.conn.execute(
            "SELECT rowid FROM records WHERE dataset = ? AND status = 'reviewed' "
            "ORDER BY position, rowid",
            (dataset,),
        )
        if only is None or r in only
    ]
    pages = [rowids[start : start + batch] for start in range(0, len(rowids), batch)]
    # each page is read while the one before is counted (store.read_ahead)
    with ReadAhead(db, _reviewed_page) as reader:
        for page, read in one_ahead((page, reader.start(page)) for page in pages):
            targets, judge, human, blind = read()
            for rowid in page:
                yield Reviewed(targets[rowid], judge[rowid], human[rowid], blind.get(rowid) or None)


Layers = dict[int, dict[str, dict[str, Any]]]


def _reviewed_page(
    db: sqlite_utils.Database, page: list[int]
) -> tuple[dict[int, RecordTargets | StoredTargets], Layers, Layers, Layers]:
    """A page of ``iter_reviewed``: its records' targets, judge, human and blind layers."""
    targets: dict[int, RecordTargets | StoredTargets] = {**target_rows.page(db.conn, page)}
    if len(targets) < len(page):  # (no stored row: read from the data, as it was)
        data = data_texts(db, [r for r in page if r not in targets])
        for rowid, text in data.items():
            targets[rowid] = RecordTargets(loads(text))
    judge = label_reads.page_layers(db, "judge_labels", page)
    human = label_reads.page_layers(db, "human_labels", page)
    return targets, judge, human, blind_layers(db, page)


def reviewed_metric_pairs(
    db: sqlite_utils.Database, dataset: str, only: set[int] | None = None
) -> dict[str, list[tuple[float, float]]]:
    """Per public metric (by name), the stored ``(judge, effective)`` values of the
    reviewed records (those in ``only`` when given) where both are defined, in file
    order: the rows ``metrics --per-record`` reads, so that the agreement report and it
    can never disagree on a record. One query: a record without human labels has its
    judge value for its effective one (``metric_layers.HUMAN``)."""
    from . import metric_writes

    metric_writes.ensure(db, dataset)
    return _metric_pairs(db.conn, dataset, only)


def reviewed_metric_pairs_apart(
    db: sqlite_utils.Database, dataset: str, only: set[int] | None = None
) -> Callable[[], dict[str, list[tuple[float, float]]]]:
    """``reviewed_metric_pairs``, to be read on another thread: the returned function
    reads them on a connection of its own, so that SQLite runs the query beside the
    label count (``agreement``) instead of before it. The rows are made sure of here,
    on ``db`` (that may write). A database without a file is read on ``db`` itself."""
    from . import metric_writes
    from .db import connect_read_only

    metric_writes.ensure(db, dataset)
    path = file_of(db)
    if not path:  # (in memory: no second connection can see it)
        return lambda: _metric_pairs(db.conn, dataset, only)

    def read() -> dict[str, list[tuple[float, float]]]:
        conn = connect_read_only(path)
        try:
            return _metric_pairs(conn, dataset, only)
        finally:
            conn.close()

    return read


def _metric_pairs(
    conn: sqlite3.Connection, dataset: str, only: set[int] | None
) -> dict[str, list[tuple[float, float]]]:
    from .metric_layers import HUMAN

    pairs: dict[str, list[tuple[float, float]]] = {}
    # (the subquery asks HUMAN once per record; LIMIT keeps SQLite from folding it in)
    for name, judge, reviewed, rowid in conn.execute(
        "SELECT j.name, j.value, CASE WHEN r.h THEN e.value ELSE j.value END AS v, r.rowid "
        f"FROM (SELECT r.rowid, r.position, {HUMAN} AS h FROM records r "
        "WHERE r.dataset = ? AND r.status = 'reviewed' LIMIT -1) r "
        "JOIN record_metrics j ON j.record = r.rowid AND j.layer = 'judge' "
        "LEFT JOIN record_metrics e ON r.h AND e.record = r.rowid AND e.layer = 'effective' "
        "AND e.name = j.name "
        "WHERE instr(j.name, '._') = 0 AND j.value IS NOT NULL AND v IS NOT NULL "
        "ORDER BY j.name, r.position, r.rowid",
        (dataset,),
    ):
        if only is None or rowid in only:
            pairs.setdefault(name, []).append((judge, reviewed))
    return dict(sorted(pairs.items()))


def gold_metadata(stored: StoredRecord, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The ``review`` block of a gold-set record: who reviewed it, when, and the metric
    variants in force (so numbers computed from the gold set can be reproduced)."""
    return {
        "reviewer": stored.reviewed_by,
        "reviewed_at": stored.reviewed_at,
        "status": stored.status,
        "variant": dict(settings),
    }


def with_gold_metadata(
    items: Iterable[StoredRecord], settings: Mapping[str, Any]
) -> Iterator[StoredRecord]:
    """Records for a gold-set export: each record's data gains a ``review`` field
    (``gold_metadata``), written by the native writer like any other field."""
    for stored in items:
        data = {**stored.record.data, "review": gold_metadata(stored, settings)}
        yield replace(stored, stored_data=dumps(data))


# -- samples --------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    id: int
    dataset: str
    n: int
    by: str | None
    seed: int
    population: int
    at: str
    members: tuple[int, ...]  # record rowids, file order


def _strata(db: sqlite_utils.Database, dataset: str, by: str | None) -> list[tuple[int, str]]:
    if by is None:
        sql = "SELECT rowid, NULL FROM records WHERE dataset = ? ORDER BY position, rowid"
        return [(r, "null") for r, _ in db.conn.execute(sql, (dataset,))]
    path = '$."' + by.replace('"', '""') + '"'
    sql = (
        "SELECT rowid, json_quote(json_extract(data, ?)) FROM records WHERE dataset = ? "
        "ORDER BY position, rowid"
    )
    return [(rowid, value or "null") for rowid, value in db.conn.execute(sql, (path, dataset))]


def draw_sample(
    db: sqlite_utils.Database, dataset: str, n: int, by: str | None = None, seed: int = 0
) -> Sample:
    """Draw and store a seeded sample of ``n`` records (stratified by field ``by``)."""
    units = _strata(db, dataset, by)
    if n < 1:
        raise RagreviewError(f"--n must be at least 1, got {n}")
    if n > len(units):
        raise RagreviewError(f"dataset {dataset!r} has only {len(units)} records; cannot draw {n}")
    if by is not None and all(s == "null" for _, s in units):
        raise RagreviewError(f"no record of dataset {dataset!r} has a field {by!r}")
    chosen = sampling.draw(units, n, seed)
    stratum = dict(units)
    at = now()
    with write(db.conn) as conn:
        cur = conn.execute(
            "INSERT INTO samples (dataset, n, by_field, seed, population, at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (dataset, n, by, seed, len(units), at),
        )
        sample_id = cur.lastrowid
        assert sample_id is not None
        conn.executemany(
            "INSERT INTO sample_records (sample, record, stratum) VALUES (?, ?, ?)",
            [(sample_id, r, None if by is None else stratum[r]) for r in chosen],
        )
    return Sample(sample_id, dataset, n, by, seed, len(units), at, tuple(chosen))


def latest_sample(db: sqlite_utils.Database, dataset: str) -> Sample | None:
    row = db.conn.execute(
        "SELECT id, n, by_field, seed, population, at FROM samples WHERE dataset = ? "
        "ORDER BY id DESC LIMIT 1",
        (dataset,),
    ).fetchone()
    if row is None:
        return None
    sample_id, n, by, seed, population, at = row
    members = tuple(
        r
        for (r,) in db.conn.execute(
            "SELECT s.record FROM sample_records s JOIN records r ON r.rowid = s.record "
            "WHERE s.sample = ? ORDER BY r.position, r.rowid",
            (sample_id,),
        )
    )
    return Sample(sample_id, dataset, n, by, seed, population, at, members)


def sample_report(db: sqlite_utils.Database, sample: Sample) -> dict[str, Any]:
    """How the sample was drawn and how far its review has got, per stratum."""
    strata: dict[str, dict[str, int]] = {}
    if sample.by is not None:
        for stratum, count in _population(db, sample):
            strata[stratum] = {"population": count, "drawn": 0, "reviewed": 0}
    reviewed_in = 0
    for stratum, status in db.conn.execute(
        "SELECT s.stratum, r.status FROM sample_records s JOIN records r ON r.rowid = s.record "
        "WHERE s.sample = ?",
        (sample.id,),
    ):
        done = status == "reviewed"
        reviewed_in += done
        if sample.by is not None:
            block = strata.setdefault(stratum, {"population": 0, "drawn": 0, "reviewed": 0})
            block["drawn"] += 1
            block["reviewed"] += done
    outside = db.conn.execute(
        "SELECT count(*) FROM records WHERE dataset = ? AND status = 'reviewed' AND rowid NOT IN "
        "(SELECT record FROM sample_records WHERE sample = ?)",
        (sample.dataset, sample.id),
    ).fetchone()[0]
    return {
        "id": sample.id,
        "n": sample.n,
        "by": sample.by,
        "seed": sample.seed,
        "population": sample.population,
        "drawn_at": sample.at,
        "method": "stratified (proportional)" if sample.by else "simple random",
        "reviewed": reviewed_in,
        "reviewed_outside_sample": outside,
        "strata": {_stratum_label(k): v for k, v in strata.items()},
    }


def _population(db: sqlite_utils.Database, sample: Sample) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for _, stratum in _strata(db, sample.dataset, sample.by):
        counts[stratum] = counts.get(stratum, 0) + 1
    return list(counts.items())


def _stratum_label(stratum: str) -> str:
    """A stored JSON stratum value as shown to people: ``"trace"`` -> ``trace``."""
    value = loads(stratum)
    return value if isinstance(value, str) else dumps(value)


def record_ids(db: sqlite_utils.Database, rowids: tuple[int, ...]) -> list[str]:
    """Record ids of these rowids, in the order given."""
    ids = dict(
        bulk.rows_in(db.conn, "SELECT rowid, id FROM records WHERE rowid IN ({ids})", rowids)
    )
    return [ids[r] for r in rowids]
