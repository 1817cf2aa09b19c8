"""``agreement`` reads the stored rows, not parsed records: the same report as the
per-record path on a file of every family.

``review_queries.iter_reviewed`` gives each reviewed record as its label targets,
stored apart when it was marked reviewed (``StoredTargets``, ``store.target_rows``) or
read from the stored JSON (``RecordTargets``), and ``reviewed_metric_pairs`` the metric
values in one query (``reviewed_metric_pairs_apart``: the same, read on a thread and a
connection of its own). The reference is the per-record path they replaced: every
reviewed record parsed (``store.records.iterate``), its layers and blind pass, counted
by ``LabelTally`` over the ``Record``, and the metric values read record by record
(``metric_reads.records_values``). The reviews are seeded and real (``history``):
overrides, reverts, blind passes, a sample; then layers no writer makes (a label on a
target the record lacks, a list where a choice belongs, JSON null, a label of another
family, citations of unknown keys) and an item deleted under its labels.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ragreview.core import agreement_report
from ragreview.core.agreement_report import Reviewed
from ragreview.core.errors import RagreviewError
from ragreview.core.labels import CATALOGUE
from ragreview.core.record_targets import RecordTargets, StoredTargets
from ragreview.store import (
    history,
    item_edits,
    label_reads,
    metric_reads,
    open_database,
    review_queries,
    target_rows,
)
from ragreview.store import records as store_records

from ..core.test_agreement_counts import random_value
from ..formats.helpers import FAMILY_SOURCES, map_args, run

REVIEWER = "ann"


def review(db, rng: random.Random) -> None:
    """Mark most of (up to) 30 records reviewed, with seeded overrides, reverts and
    blind passes."""
    for stored in list(store_records.iterate(db))[:30]:
        if rng.random() < 0.2:
            continue  # left unreviewed: never counted
        record = stored.record
        for name, spec in CATALOGUE.items():
            for target in record.targets(spec.target):
                roll = rng.random()
                if roll > 0.25 or rng.random() < 0.6:  # (a few labels per record)
                    continue
                value = None if roll < 0.03 else random_value(name, record, rng, "general")
                try:
                    history.set_label(
                        db, stored.rowid, name, target, value, REVIEWER, blind=roll > 0.2
                    )
                except RagreviewError:  # e.g. RGB judgements on a record without them
                    pass
        history.mark(db, stored.rowid, "reviewed", REVIEWER)


def malformed(db, rng: random.Random) -> None:
    """Layers no writer of ours makes, written as rows: what the counts must survive
    exactly as the per-record path does."""
    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records WHERE status = 'reviewed'")]
    rows = []
    for rowid in rng.sample(rowids, min(len(rowids), 6)):
        rows += [
            ("judge_labels", rowid, "relevant", "no-such-key", "true"),  # a target it lacks
            ("human_labels", rowid, "utilized", "no-such-key", "false"),
            ("judge_labels", rowid, "fact", "f-gone", '"S"'),
            ("human_labels", rowid, "answerability", "*", '["ANSWERABLE"]'),  # a list
            ("judge_labels", rowid, "idk", "*", "null"),  # JSON null
            ("human_labels", rowid, "rejected", "*", "true"),  # another family's label
            ("judge_labels", rowid, "verdict", "*", "1"),  # a number for a boolean
        ]
    for rowid in rng.sample(rowids, min(len(rowids), 3)):
        data = json.loads(
            db.conn.execute("SELECT data FROM records WHERE rowid = ?", (rowid,)).fetchone()[0]
        )
        for pair in data.get("response") or []:  # citations of keys the record lacks
            rows.append(("judge_labels", rowid, "support_keys", pair[0], '["zz", "general"]'))
    with db.conn:
        event = db.conn.execute(
            "INSERT INTO events (record, kind, name, target, new, reviewer, at) "
            "VALUES (?, 'set', 'x', '*', 'true', ?, '2026-01-01')",
            (rowids[0], REVIEWER),
        ).lastrowid
        for table, rowid, name, target, value in rows:
            extra = ", reviewer, at, event" if table == "human_labels" else ""
            marks = ", ?, ?, ?" if table == "human_labels" else ""
            db.conn.execute(
                f"INSERT OR REPLACE INTO {table} (record, name, target, value{extra}) "
                f"VALUES (?, ?, ?, ?{marks})",
                (rowid, name, target, value, *((REVIEWER, "2026-01-01", event) if extra else ())),
            )
        for rowid in rng.sample(rowids, min(len(rowids), 3)):  # a blind pass row as written
            db.conn.execute(
                "INSERT INTO events (record, kind, name, target, new, reviewer, at, pass) "
                "VALUES (?, 'set', 'relevant', 'no-such-key', 'true', ?, '2026-01-02', 'blind')",
                (rowid, REVIEWER),
            )


def delete_an_item_under_its_labels(db) -> None:
    """A reviewer's deleted statement or fact keeps its labels: they name a target the
    record no longer has."""
    for rowid, text in db.conn.execute(
        "SELECT rowid, data FROM records WHERE status = 'reviewed'"
    ).fetchall():
        data = json.loads(text)
        for kind, field in (("statement", "statements"), ("fact", "facts")):
            items = data.get(field) or []
            if len(items) > 1:
                item_edits.delete(db, rowid, kind, items[0][0], REVIEWER)
                return


def per_record_rows(db, dataset: str, only: set[int] | None) -> list:
    """The reviewed records (those in ``only``), parsed, in file order."""
    return [
        s
        for s in store_records.iterate(db, dataset, status="reviewed")
        if only is None or s.rowid in only
    ]


def per_record(db, dataset: str, only: set[int] | None):
    """The reference: every reviewed record parsed, its layers, the metric values read
    record by record."""
    stored = per_record_rows(db, dataset, only)
    blind = review_queries.blind_layers(db, [s.rowid for s in stored])
    reviewed = [Reviewed(s.record, s.judge, s.human, blind.get(s.rowid) or None) for s in stored]
    values = metric_reads.records_values(db, [s.rowid for s in stored])
    metrics = agreement_report.metric_pairs(
        (values[s.rowid]["judge"], values[s.rowid]["effective"]) for s in stored
    )
    return reviewed, metrics


def reports(db, dataset: str, only: set[int] | None = None) -> tuple[str, str]:
    fast_pairs = review_queries.reviewed_metric_pairs(db, dataset, only)
    # as `agreement` reads them: on a thread and a connection of their own
    apart = agreement_report.Background(
        review_queries.reviewed_metric_pairs_apart(db, dataset, only)
    )
    fast = agreement_report.build(
        review_queries.iter_reviewed(db, dataset, only, batch=7), apart, resamples=50
    )
    reviewed, metrics = per_record(db, dataset, only)
    assert fast_pairs == metrics
    assert_page_layers_equal(db)
    assert apart.result() == metrics
    # no Record was built: each comes as its stored targets, or read from its data
    got = [type(r.record) for r in review_queries.iter_reviewed(db, dataset, only)]
    stored = target_rows.page(db.conn, [s.rowid for s in per_record_rows(db, dataset, only)])
    assert got.count(StoredTargets) == len(stored)
    assert got.count(RecordTargets) == len(got) - len(stored)
    slow = agreement_report.build(reviewed, metrics, resamples=50)
    return json.dumps(fast, ensure_ascii=False), json.dumps(slow, ensure_ascii=False)


def assert_page_layers_equal(db) -> None:
    """``label_reads.page_layers`` gives ``records.judge_layers`` / ``human_layers``,
    labels and targets in the same order."""
    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records ORDER BY rowid DESC")]
    for page in (rowids, rowids[:1], []):
        for table, each in (
            ("judge_labels", store_records.judge_layers),
            ("human_labels", store_records.human_layers),
        ):
            got, want = label_reads.page_layers(db, table, page), each(db, page)
            # (the same order throughout; NaN is not equal to itself, its text is)
            assert json.dumps(got) == json.dumps(want)


def test_page_layers_read_any_stored_value_and_key(tmp_path: Path) -> None:
    """Keys JSON must escape, NaN and an integer beyond 64 bits (which only the json
    module reads), JSON null, nested values: the page reads what each row reads."""
    db_path = tmp_path / "t.db"
    assert (
        run("import", FAMILY_SOURCES[0], "--db", db_path, *map_args(FAMILY_SOURCES[0])).exit_code
        == 0
    )
    db = open_database(db_path)
    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records ORDER BY rowid")][:4]
    odd = ['q"uote', "back\\slash", "tab\tline\nend", "\u00e9t\u00e9 \u2603", "\x01", ""]
    values = ["NaN", "123456789012345678901234567890", "null", '{"a": [1, 2.5, "x"]}', "-0.0"]
    with db.conn:
        for i, rowid in enumerate(rowids):
            for j, key in enumerate(odd):
                db.conn.execute(
                    "INSERT OR REPLACE INTO judge_labels (record, name, target, value) "
                    "VALUES (?, ?, ?, ?)",
                    (rowid, key or "relevant", key, values[(i + j) % len(values)]),
                )
        # a page without NaN: read in one text (orjson's float for a long integer)
        db.conn.execute("DELETE FROM judge_labels WHERE value = 'NaN'")
        assert_page_layers_equal(db)
        db.conn.execute(
            "INSERT OR REPLACE INTO judge_labels (record, name, target, value) VALUES (?, ?, ?, ?)",
            (rowids[-1], "relevant", "n", "NaN"),
        )
    assert_page_layers_equal(db)
    db.conn.close()


@pytest.mark.parametrize("source", FAMILY_SOURCES, ids=lambda p: p.name)
def test_stored_rows_give_the_per_record_report(source: Path, tmp_path: Path) -> None:
    db_path = tmp_path / "t.db"
    assert run("import", source, "--db", db_path, *map_args(source)).exit_code == 0
    db = open_database(db_path)
    dataset = db.conn.execute("SELECT name FROM datasets").fetchone()[0]
    rng = random.Random(source.name)
    review(db, rng)
    fast, slow = reports(db, dataset)
    assert fast == slow
    assert json.loads(fast)["records"] > 0
    malformed(db, rng)
    delete_an_item_under_its_labels(db)
    fast, slow = reports(db, dataset)
    assert fast == slow
    with db.conn:  # half the records without stored targets: read from their data
        db.conn.execute("DELETE FROM record_targets WHERE record % 2 = 0")
    assert reports(db, dataset) == (fast, slow)
    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records")]
    only = set(rng.sample(rowids, max(1, len(rowids) // 2)))  # a sample's members
    fast, slow = reports(db, dataset, only)
    assert fast == slow
    db.conn.close()
