"""A record's effective metric layer is stored only while it has human labels
(``store.metric_layers``): without them it is its judge layer, and every reader gives
the judge's values there, exactly as when every record's effective rows were stored.
A database from an older build holds those rows for unlabelled records too and must
read the same. Real SQLite files, real imports and label writes."""

from __future__ import annotations

import pytest

from ragreview.store import (
    browse,
    estimate_reads,
    history,
    metric_reads,
    metric_stats_writes,
    metric_summary_reads,
    metric_writes,
    open_database,
    settings,
)
from ragreview.store import records as store_records

from .test_metric_writes import (
    assert_summary_matches_scratch,
    assert_sums_equal_a_rebuild,
    with_mixed_records,
)


@pytest.fixture
def db(tmp_path):
    return with_mixed_records(open_database(tmp_path / "e.ragreview.db"))


def rowid(db, rid: str) -> int:
    return store_records.find(db, rid, "ds").rowid


def effective_stored(db) -> set[int]:
    """The records with effective rows, of either table."""
    return {
        r
        for (r,) in db.conn.execute(
            "SELECT record FROM record_metrics WHERE layer = 'effective' "
            "UNION SELECT record FROM metric_stats WHERE layer = 'effective'"
        )
    }


def labelled(db) -> set[int]:
    return {r for (r,) in db.conn.execute("SELECT DISTINCT record FROM human_labels")}


def store_as_an_older_build(db) -> None:
    """Every unlabelled record's effective rows, as builds before this one stored them:
    its judge rows less the hidden count, its judge stats without the stored F1."""
    cols = [r[1] for r in db.conn.execute("PRAGMA table_info(metric_stats)")]
    stats = ", ".join("NULL" if c == "longform_stored_f1" else c for c in cols[2:])
    unlabelled = "record NOT IN (SELECT record FROM human_labels)"
    with db.conn:
        db.conn.execute(
            "INSERT INTO record_metrics SELECT record, 'effective', name, value "
            f"FROM record_metrics WHERE layer = 'judge' AND name <> 'record._count' AND {unlabelled}"
        )
        db.conn.execute(
            f"INSERT INTO metric_stats ({', '.join(cols)}) SELECT record, 'effective', {stats} "
            f"FROM metric_stats WHERE layer = 'judge' AND {unlabelled}"
        )


def every_read(db) -> dict:
    """What each reader of the metric rows gives (sums rebuilt from the rows as well)."""
    ids = [r for (r,) in db.conn.execute("SELECT rowid FROM records ORDER BY rowid")]
    names = sorted(metric_reads.metric_names(db, "ds"))
    with db.conn:  # (rebuilt, read, and rolled back: the stored sums stay as they were)
        metric_writes.rebuild_totals(db, "ds")
        rebuilt = metric_summary_reads.dataset_summary(db, "ds")
        db.conn.rollback()
    return {
        "values": metric_reads.records_values(db, ids),
        "table": list(metric_reads.rows(db, "ds", names)),
        "reviewed table": list(metric_reads.rows(db, "ds", names, "reviewed")),
        "per record": list(metric_reads.iter_record_values(db, "ds")),
        "estimate": estimate_reads.metric_values(db, ids),
        "summary": metric_summary_reads.dataset_summary(db, "ds"),
        "rebuilt": rebuilt,
        "grouped": metric_summary_reads.grouped_summaries(db, "ds", "task"),
        "by delta": list(browse.rowids(db, "ds", browse.ListFilter(sort="delta"))),
        "first": metric_reads.first_records(db, "ds", names),
    }


def label_some(db) -> None:
    history.set_label(db, rowid(db, "t2"), "relevant", "0d", True, "ann")
    history.set_label(db, rowid(db, "t5"), "supported", "b", False, "ann")
    history.set_label(db, rowid(db, "l0"), "fact", "f2", "S", "ann")
    history.set_label(db, rowid(db, "l3"), "fact", "f1", "IR", "ann")  # (the same value)
    history.mark(db, rowid(db, "t5"), "reviewed", "ann")  # (the reviewed table reads it)


def test_an_import_stores_no_effective_layer_and_a_label_stores_it_until_reverted(db):
    assert effective_stored(db) == set()
    summary = metric_summary_reads.dataset_summary(db, "ds")
    assert summary["effective"] == summary["judge"]  # (the same sums, not a copy of rows)
    t2 = rowid(db, "t2")
    history.set_label(db, t2, "relevant", "0d", True, "ann")
    assert effective_stored(db) == {t2}
    assert metric_reads.record_values(db, t2)["effective"]["trace.relevance"] == 0.75
    assert_summary_matches_scratch(db)
    history.set_label(db, t2, "relevant", "0d", None, "ann")  # revert: no human label left
    assert effective_stored(db) == set() and labelled(db) == set()
    assert_summary_matches_scratch(db)
    summary = metric_summary_reads.dataset_summary(db, "ds")
    assert summary["effective"] == pytest.approx(summary["judge"], abs=1e-12)


def test_every_reader_gives_what_stored_effective_rows_gave(db):
    label_some(db)
    assert effective_stored(db) == labelled(db)
    now = every_read(db)
    store_as_an_older_build(db)
    assert every_read(db) == now
    # and the judge's values stand for an unlabelled record's effective ones
    values = now["values"][rowid(db, "t3")]
    assert values["effective"] == values["judge"] and values["judge"]
    # the labelled records whose values moved first; l2's metrics are all undefined
    moved = [rowid(db, rid) for rid in ("t5", "l0", "t2")]
    assert now["by delta"][:3] == moved and now["by delta"][-1] == rowid(db, "l2")


@pytest.mark.parametrize("stats", [True, False])
def test_an_older_builds_rows_keep_the_sums_exact_as_labels_come_and_go(db, stats):
    """``stats`` False: a build from before metric_stats (m012), which stored every
    record's effective rows and no stats rows."""
    store_as_an_older_build(db)
    if not stats:
        with db.conn:
            db.conn.execute("DELETE FROM metric_stats")
    for rid in ("t1", "t4", "l1"):
        assert rowid(db, rid) in effective_stored(db)
    t1, l1 = rowid(db, "t1"), rowid(db, "l1")
    history.set_label(db, t1, "utilized", "0b", True, "ann")
    history.set_label(db, l1, "fact", "f1", "NS", "ann")
    assert_summary_matches_scratch(db)
    history.set_label(db, t1, "utilized", "0b", None, "ann")
    assert_summary_matches_scratch(db)
    assert t1 not in effective_stored(db)  # (its rows were rewritten without them)
    assert_sums_equal_a_rebuild(db)


def totals(db, names) -> list[tuple]:
    marks = ",".join("?" * len(names))
    sql = f"SELECT * FROM metric_totals WHERE name IN ({marks}) ORDER BY layer, name"
    return db.conn.execute(sql, list(names)).fetchall()


@pytest.mark.parametrize("older", [False, True])
def test_a_variant_change_reads_the_judge_stats_of_unlabelled_records(db, older):
    """The sums a variant change writes from the stats rows are a rebuild's, to the bit
    (metric_stats_writes.apply adds them in the same order)."""
    label_some(db)
    if older:
        store_as_an_older_build(db)
    for name, value in (("trace.variant", "capped20"), ("longform.k", 1)):
        old = settings.get_all(db, "ds")[name]
        decided = metric_stats_writes.changed(name, value, old)
        metric_writes.put_setting(db, "ds", name, value)
        applied = totals(db, decided)
        assert {t[1] for t in applied} == {"judge", "effective"}
        with db.conn:
            metric_writes.rebuild_totals(db, "ds")
        assert totals(db, decided) == applied, name
    assert_summary_matches_scratch(db)
    assert (effective_stored(db) == labelled(db)) is not older
