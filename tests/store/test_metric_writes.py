"""Stored metric rows and incremental dataset aggregates on a real SQLite file."""

from __future__ import annotations

import pytest

from ragreview.core.import_items import ImportItem
from ragreview.core.labels import check_layer, effective
from ragreview.core.metrics import dataset_values, record_values, undefined_counts
from ragreview.core.metrics.aggregate import totals_of
from ragreview.core.record import parse_record
from ragreview.store import (
    history,
    importer,
    memory_database,
    metric_reads,
    metric_summary_reads,
    metric_writes,
    open_database,
    settings,
)
from ragreview.store import records as store_records


def trace_item(i: int, n_rel: int, stored_relevance: float | None = None) -> ImportItem:
    obj = {
        "id": f"t{i}",
        "task": "trace",
        "noise_rate": 0.5 if i % 2 else 1.0,
        "documents": [{"sentences": [["0a", "aa"], ["0b", "b"], ["0c", "cccc"], ["0d", "d"]]}],
        "response": [["a", "x"], ["b", "y"]],
    }
    if stored_relevance is not None:
        obj["scores"] = {"stored.relevance_score": stored_relevance}
    record = parse_record(obj)
    judge = {
        "relevant": {k: True for k in ["0a", "0b", "0c", "0d"][:n_rel]},
        "utilized": {"0a": True},
        "supported": {"a": True, "b": i % 3 != 0},
    }
    return ImportItem(i + 1, record, check_layer(record, judge, "judge"))


def longform_item(i: int, labels: list[str]) -> ImportItem:
    record = parse_record(
        {
            "id": f"l{i}",
            "task": "longform",
            "facts": [[f"f{j + 1}", "x", None] for j in range(len(labels))],
        }
    )
    judge = {"fact": {f"f{j + 1}": v for j, v in enumerate(labels)}}
    return ImportItem(100 + i, record, judge)


def with_mixed_records(database):
    """``database`` with dataset ``ds``: 12 TRACe records (4 with stored scores) and 4
    long-form ones, judge labels only."""
    items = [trace_item(i, i % 5, stored_relevance=0.25 if i < 4 else None) for i in range(12)]
    items += [longform_item(i, lab) for i, lab in enumerate([["S", "NS"], ["S"], [], ["IR"]])]
    importer.import_records(database, "ds", "ragreview", None, items)
    return database


@pytest.fixture
def db(tmp_path):
    return with_mixed_records(open_database(tmp_path / "m.ragreview.db"))


def scratch(db, dataset="ds"):
    """Dataset values recomputed from nothing but the records and labels."""
    values = settings.get_all(db, dataset)
    judge, eff = [], []
    for stored in store_records.iterate(db, dataset):
        judge.append(record_values(stored.record, stored.judge, values))
        eff.append(record_values(stored.record, effective(stored.judge, stored.human), values))
    return dataset_values(totals_of(judge), values), dataset_values(totals_of(eff), values)


def scratch_undefined(db, dataset="ds"):
    values = settings.get_all(db, dataset)
    judge, eff = [], []
    for stored in store_records.iterate(db, dataset):
        judge.append(record_values(stored.record, stored.judge, values))
        eff.append(record_values(stored.record, effective(stored.judge, stored.human), values))
    return {
        "judge": undefined_counts(totals_of(judge)),
        "effective": undefined_counts(totals_of(eff)),
    }


def assert_summary_matches_scratch(db):
    summary = metric_summary_reads.dataset_summary(db, "ds")
    assert summary["undefined"] == scratch_undefined(db)
    judge, eff = scratch(db)
    assert summary["judge"].keys() == judge.keys()
    assert summary["effective"].keys() == eff.keys()
    for name in judge:
        assert summary["judge"][name] == pytest.approx(judge[name], abs=1e-12), name
    for name in eff:
        assert summary["effective"][name] == pytest.approx(eff[name], abs=1e-12), name


def test_migration_creates_tables():
    database = memory_database()
    assert {"record_metrics", "metric_totals"} <= set(database.table_names())


def test_import_stores_rows_and_totals(db):
    assert_summary_matches_scratch(db)
    summary = metric_summary_reads.dataset_summary(db, "ds")
    assert summary["records"] == 16 and summary["reviewed_records"] == 0
    assert summary["group"] is None
    # means over the records where defined: the abstention is not counted
    assert summary["judge"]["longform.supported"] == pytest.approx(2 / 3)
    rowid = store_records.find(db, "t1", "ds").rowid
    values = metric_reads.record_values(db, rowid)
    assert values["judge"] == values["effective"]
    assert values["judge"]["trace.relevance"] == 0.25


def test_label_change_moves_only_that_record_and_the_sums(db):
    stored = store_records.find(db, "t2", "ds")
    before = metric_reads.record_values(db, stored.rowid)
    other = store_records.find(db, "t3", "ds").rowid
    other_before = metric_reads.record_values(db, other)
    history.set_label(db, stored.rowid, "relevant", "0d", True, "ann")
    history.set_label(db, stored.rowid, "supported", "b", False, "ann")
    after = metric_reads.record_values(db, stored.rowid)
    assert after["judge"] == before["judge"]
    assert after["effective"]["trace.relevance"] == 0.75
    assert after["effective"]["trace.adherence"] == 0.0
    assert metric_reads.record_values(db, other) == other_before
    assert_summary_matches_scratch(db)
    lf = store_records.find(db, "l2", "ds").rowid  # the abstention gains no facts
    history.set_label(db, store_records.find(db, "l0", "ds").rowid, "fact", "f2", "S", "ann")
    assert metric_reads.record_values(db, lf)["effective"]["longform.f1_at_k"] is None
    assert_summary_matches_scratch(db)
    history.undo(db, "ann")
    history.undo(db, "ann")
    history.set_label(db, stored.rowid, "relevant", "0d", None, "ann")  # revert
    assert_summary_matches_scratch(db)
    summary = metric_summary_reads.dataset_summary(db, "ds")
    assert summary["effective"]["trace.relevance"] == pytest.approx(
        summary["judge"]["trace.relevance"]
    )


def assert_sums_equal_a_rebuild(db) -> None:
    """The running sums moved label by label equal the sums rebuilt from the records."""
    incremental = metric_summary_reads.dataset_summary(db, "ds")
    with db.conn:
        metric_writes.rebuild_totals(db, "ds")
    rebuilt = metric_summary_reads.dataset_summary(db, "ds")
    for layer in ("judge", "effective"):
        assert incremental[layer] == pytest.approx(rebuilt[layer], abs=1e-12)


def test_incremental_sums_equal_a_rebuild(db):
    for i in range(12):
        rowid = store_records.find(db, f"t{i}", "ds").rowid
        history.set_label(db, rowid, "utilized", "0b", True, "ann")
        history.set_label(db, rowid, "relevant", "0a", i % 2 == 0, "ann")
    assert_sums_equal_a_rebuild(db)


def test_settings_change_recomputes(db):
    metric_writes.put_setting(db, "ds", "trace.variant", "capped20")
    metric_writes.put_setting(db, "ds", "longform.k", 1)
    assert_summary_matches_scratch(db)
    values = metric_reads.record_values(db, store_records.find(db, "t4", "ds").rowid)
    assert values["judge"]["trace.relevance"] == 4 / 20
    summary = metric_summary_reads.dataset_summary(db, "ds")
    assert summary["judge"]["longform.f1_at_k"] == pytest.approx((2 / 3 + 1 + 0) / 3)


def test_settings_change_reports_progress_over_every_record(db):
    done: list[int] = []
    assert metric_writes.put_setting(db, "ds", "trace.variant", "length", on_progress=done.append)
    assert sum(done) == 16  # 12 trace + 4 long-form records


def test_unchanged_setting_recomputes_nothing(db):
    done: list[int] = []
    assert not metric_writes.put_setting(
        db, "ds", "longform.k", 100, on_progress=done.append
    )  # default
    metric_writes.put_setting(db, "ds", "longform.k", 64)
    assert not metric_writes.put_setting(db, "ds", "longform.k", 64, on_progress=done.append)
    assert done == []
    assert settings.get_all(db, "ds")["longform.k"] == 64


def test_bulk_refresh_rebuilds_sums(db, monkeypatch):
    monkeypatch.setattr(metric_writes, "BULK", 3)
    metric_writes.put_setting(db, "ds", "trace.variant", "length")
    assert_summary_matches_scratch(db)


def test_grouped_summaries(db):
    groups = metric_summary_reads.grouped_summaries(db, "ds", "noise_rate")
    assert [g["group"] for g in groups] == [
        {"noise_rate": 0.5},
        {"noise_rate": 1.0},
        {"noise_rate": None},
    ]
    assert [g["records"] for g in groups] == [6, 6, 4]
    one = metric_summary_reads.dataset_summary(db, "ds", {"noise_rate": 0.5})
    assert one == groups[0]
    odd = [i for i in range(12) if i % 2]
    assert one["judge"]["trace.relevance"] == pytest.approx(sum((i % 5) / 4 for i in odd) / 6)
    by_task = metric_summary_reads.grouped_summaries(db, "ds", "task")
    assert [g["group"]["task"] for g in by_task] == ["longform", "trace"]
    assert "trace.relevance" not in by_task[0]["judge"]
    with pytest.raises(Exception, match="cannot group"):
        metric_summary_reads.grouped_summaries(db, "ds", "x'); DROP TABLE records; --")


def test_reviewed_count(db):
    history.mark(db, store_records.find(db, "t0", "ds").rowid, "reviewed", "ann")
    assert metric_summary_reads.dataset_summary(db, "ds")["reviewed_records"] == 1
    assert (
        metric_summary_reads.dataset_summary(db, "ds", {"task": "trace"})["reviewed_records"] == 1
    )


def test_stored_scores_compared_with_recomputation(db):
    # t0..t3 carry stored relevance 0.25; ours is (i % 5) / 4 -> 0, .25, .5, .75
    out = metric_summary_reads.stored_comparison(db, "ds")
    assert out["trace.relevance"]["n"] == 4
    assert out["trace.relevance"]["disagree"] == 3
    assert out["trace.relevance"]["max_abs_diff"] == pytest.approx(0.5)
    summary = metric_summary_reads.dataset_summary(db, "ds")
    rmse = ((0.25**2 + 0 + 0.25**2 + 0.5**2) / 4) ** 0.5
    assert summary["judge"]["trace.relevance_rmse"] == pytest.approx(rmse)


def test_per_record_iteration_in_file_order(db):
    rows = list(metric_reads.iter_record_values(db, "ds"))
    assert [r["id"] for r in rows][:3] == ["t0", "t1", "t2"]
    assert len(rows) == 16
    assert all(not any("._" in n for n in r["judge"]) for r in rows)


def test_ragbench_raw_list_counts_in_both_layers(tmp_path):
    database = open_database(tmp_path / "rb.ragreview.db")
    record = parse_record(
        {
            "id": "rb",
            "task": "trace",
            "documents": [{"sentences": [["0a", "a"], ["0b", "b"], ["0c", "c"], ["0d", "d"]]}],
            # the judge's list was ["0a", "0a.", "0b"]: 3 entries for 2 keys
            "scores": {"ragbench.relevant_listed": 3, "stored.relevance_score": 0.75},
        }
    )
    judge = {"relevant": {"0a": True, "0b": True}}
    importer.import_records(database, "d", "ragbench", None, [ImportItem(1, record, judge)])
    rowid = store_records.find(database, "rb", "d").rowid
    assert metric_reads.record_values(database, rowid)["judge"]["trace.relevance"] == 0.75
    assert metric_summary_reads.stored_comparison(database, "d")["trace.relevance"]["disagree"] == 0
    history.set_label(database, rowid, "relevant", "0c", True, "ann")
    values = metric_reads.record_values(database, rowid)
    assert values["judge"]["trace.relevance"] == 0.75
    assert values["effective"]["trace.relevance"] == 1.0


def test_dataset_from_before_metrics_is_filled_on_first_read(db):
    expected = metric_summary_reads.dataset_summary(db, "ds")
    with db.conn:  # as a DB written by a build without metrics would be
        db.conn.execute("DELETE FROM record_metrics")
        db.conn.execute("DELETE FROM metric_totals")
    assert metric_summary_reads.dataset_summary(db, "ds") == expected
    assert len(list(metric_reads.iter_record_values(db, "ds"))) == 16


def _metric_tables(database):
    rows = database.conn.execute(
        "SELECT record, layer, name, value FROM record_metrics ORDER BY record, layer, name"
    ).fetchall()
    totals = database.conn.execute(
        "SELECT dataset, layer, name, n, undefined, total, total_sq FROM metric_totals "
        "ORDER BY dataset, layer, name"
    ).fetchall()
    return rows, totals


def test_import_bulk_path_stores_what_refresh_stores(tmp_path):
    """New records' rows go in by the import's bulk path (metric_import_writes); records that
    come with human labels go through refresh. Recomputing every record through
    refresh, one at a time from an empty table, gives the same rows and sums."""
    database = open_database(tmp_path / "bulk.ragreview.db")
    items = [trace_item(i, i % 5, stored_relevance=0.25 if i < 4 else None) for i in range(12)]
    items += [longform_item(i, lab) for i, lab in enumerate([["S", "NS"], ["S"], [], ["IR"]])]
    human = {"relevant": {"0d": True}, "supported": {"a": False}}
    items[5] = ImportItem(items[5].position, items[5].record, items[5].judge, human)
    importer.import_records(database, "ds", "ragreview", None, items)
    assert_summary_matches_scratch(database)
    assert metric_summary_reads.dataset_summary(database, "ds")["records"] == 16
    imported = _metric_tables(database)
    rowids = [r for (r,) in database.conn.execute("SELECT rowid FROM records ORDER BY rowid")]
    with database.conn:
        database.conn.execute("DELETE FROM record_metrics")
        database.conn.execute("DELETE FROM metric_totals")
        for rowid in rowids:
            metric_writes.refresh(database, [rowid])
    rows, totals = _metric_tables(database)
    assert rows == imported[0]
    # counts of defined and of undefined values agree; rows left at zero do not matter
    totals = [t for t in totals if t[3] or t[4]]
    wanted = [t for t in imported[1] if t[3] or t[4]]
    assert any(t[4] for t in wanted)  # the abstention's undefined long-form metrics
    assert [t[:5] for t in totals] == [t[:5] for t in wanted]
    for got, want in zip(totals, wanted, strict=True):
        assert got[5:] == pytest.approx(want[5:], abs=1e-12)


COUNT_ONLY = (
    "INSERT INTO metric_totals (dataset, layer, name, n, total, total_sq) "
    "SELECT 'ds', 'judge', 'record._count', count(*), count(*), count(*) FROM records"
)


def _as_before_m009(database, sums: str = COUNT_ONLY):
    """Leave the DB as the build before m009 did: undefined stored as 0.0, no
    ``undefined`` column, m009 not applied, and the running sums ``sums`` inserts."""
    with database.conn:
        database.conn.execute("UPDATE record_metrics SET value = 0.0 WHERE value IS NULL")
        database.conn.execute("DELETE FROM metric_totals")
        database.conn.execute("ALTER TABLE metric_totals DROP COLUMN undefined")
        database.conn.execute(
            "DELETE FROM _sqlite_migrations WHERE name = 'm009_metrics_undefined'"
        )
        database.conn.execute(sums)
    path = database.conn.execute("PRAGMA database_list").fetchone()[2]
    database.conn.close()
    return open_database(path)


@pytest.mark.parametrize("first", ["label", "import"])
def test_writes_right_after_the_m009_upgrade_recompute_the_dataset(db, first):
    """The upgrade drops the sums; a label change or an import before any read must
    not move sums that are not there (they would stay partial): the dataset is
    recomputed whole, and equals a recomputation from scratch."""
    upgraded = _as_before_m009(db)
    if first == "label":
        rowid = store_records.find(upgraded, "t2", "ds").rowid
        history.set_label(upgraded, rowid, "relevant", "0d", True, "ann")
    else:
        extra = [trace_item(i, 2) for i in range(40, 43)]
        importer.import_records(upgraded, "ds", "ragreview", None, extra)
    counted = upgraded.conn.execute(
        "SELECT n FROM metric_totals WHERE dataset = 'ds' AND layer = 'judge' "
        "AND name = 'record._count'"
    ).fetchone()[0]
    assert counted == upgraded.conn.execute("SELECT count(*) FROM records").fetchone()[0]
    assert_summary_matches_scratch(upgraded)
    upgraded.conn.close()


def test_upgrade_to_m009_recomputes_metrics_that_used_to_be_0(tmp_path):
    """A DB written before undefined metrics were NULL (RGB records without a
    prediction stored 0.0) is recomputed on first read after the upgrade."""
    path = tmp_path / "old.ragreview.db"
    database = open_database(path)
    data_row = parse_record(
        {"id": "q1", "task": "rgb-noise", "noise_rate": 0.4, "answer_parts": [["Paris"]]}
    )
    importer.import_records(database, "ds", "rgb", None, [ImportItem(1, data_row, {})])
    upgraded = _as_before_m009(
        database,
        "INSERT INTO metric_totals (dataset, layer, name, n, total, total_sq) "
        "VALUES ('ds', 'judge', 'rgb.correct', 1, 0.0, 0.0)",
    )
    summary = metric_summary_reads.dataset_summary(upgraded, "ds")
    assert summary["judge"]["rgb.correct"] is None and summary["judge"]["rgb.accuracy"] is None
    assert summary["undefined"]["judge"]["rgb.correct"] == 1
    rowid = store_records.find(upgraded, "q1", "ds").rowid
    assert metric_reads.record_values(upgraded, rowid)["judge"]["rgb.correct"] is None
