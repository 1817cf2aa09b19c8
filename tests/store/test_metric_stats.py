"""A variant change from the stored stats (``metric_stats_writes.apply``, SQL) gives exactly
the rows and sums a full recompute from the records gives (``metric_writes.recompute``,
which calls each family's reference-following ``metrics``), bit for bit, for every
declared variant of every family, on the real fixtures and on seeded random records.
This is the one check that the SQL forms of ``store.metric_stats`` and the Python
forms (``Family.compute``) agree (docs/contributing.md)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragreview.cli import cli
from ragreview.core.families import FAMILIES, variants
from ragreview.core.import_items import ImportItem
from ragreview.core.labels import check_layer
from ragreview.core.record import parse_record
from ragreview.store import (
    history,
    importer,
    metric_reads,
    metric_stats_writes,
    metric_writes,
    open_database,
    settings,
)
from ragreview.store import records as store_records

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "fixtures"
HAND = ROOT / "fixtures" / "handwritten"
FIXTURES = [
    HAND / "ragbench" / "covidqa_test_rows.jsonl",
    ROOT / "fixtures" / "demo.jsonl",
    HAND / "rgb" / "prediction_en_ModelX_temp0.7_noise1.0_passage5_correct0.0.json",
    HAND / "rgb" / "prediction_en_fact_ModelX_temp0.7_noise0.0_passage5_correct0.0.json",
    HAND / "rgb" / "prediction_en_ModelX_temp0.7_noise0.4_passage5_correct0.0.json",
    HAND / "safe" / "2024-04-01-12-00-00-SAFE.json",
    ROOT / "fixtures" / "factscore" / "factscore_labeled_ChatGPT.jsonl",
    SHARED / "rgb" / "en_fact.json",
    SHARED / "rgb" / "zh_int.json",
    HAND / "own" / "results_native.jsonl",
    HAND / "mtrag" / "generation_eval_output.jsonl",
]


def switches() -> list[tuple[str, object]]:
    """Every value of every setting the SQL path applies, each reached from the one
    before it, ending on the default: read from the families' declared variants
    (``Family.variants``), so a variant a family adds is checked here too."""
    out: list[tuple[str, object]] = []
    for name in metric_stats_writes.SQL_SETTINGS:
        variant = variants()[name]
        if isinstance(variant.allowed, tuple):
            others = [v for v in variant.allowed if v != variant.default]
        else:  # a positive integer: the paper's Ks, one below them, then the default
            others = [64, 7, 178]
        out += [(name, v) for v in [*others, variant.default]]
    return out


SWITCHES = switches()


def test_the_sql_path_covers_declared_variants_of_families_with_stats() -> None:
    """A setting is applied as SQL only where a family declares it and the stats its
    formulas read; its formulas name only declared stats columns."""
    declared = {f"s.{metric_stats_writes.column(n)}" for n in metric_stats_writes.declared()[0]}
    for name in metric_stats_writes.SQL_SETTINGS:
        owner = next(f for f in FAMILIES if any(v.setting == name for v in f.variants))
        assert owner.stats, name
        for value in (v for s, v in SWITCHES if s == name):
            for sql, condition in metric_stats_writes.formulas(name, value).values():
                used = set(re.findall(r"s\.[a-z0-9_]+", sql + " " + condition))
                assert used <= declared, (name, value, used - declared)
    assert [n for n, _ in SWITCHES][:3] == ["trace.variant"] * 3


def snapshot(conn) -> tuple[list, list, list]:
    return (
        conn.execute("SELECT * FROM record_metrics ORDER BY record, layer, name").fetchall(),
        conn.execute("SELECT * FROM metric_totals ORDER BY dataset, layer, name").fetchall(),
        conn.execute("SELECT * FROM metric_stats ORDER BY record, layer").fetchall(),
    )


def recomputed(db, dataset: str) -> tuple[list, list, list]:
    """The full recompute's rows and sums, rolled back after reading them."""
    conn = db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        metric_writes.recompute(db, dataset)
        return snapshot(conn)
    finally:
        conn.rollback()


def review_some(db, dataset: str, rng: random.Random) -> None:
    """Override a few labels of each kind the switched families read."""
    for stored in list(store_records.iterate(db, dataset))[::3]:
        judge = stored.judge
        for name in ("relevant", "utilized", "supported", "rejected", "part_matched", "fact"):
            targets = sorted(judge.get(name) or {})
            if not targets:
                continue
            target = rng.choice(targets)
            old = judge[name][target]
            new = {"S": "NS", "NS": "IR", "IR": "S"}.get(old, old) if name == "fact" else not old
            history.set_label(db, stored.rowid, name, target, new, "tester")
        if stored.record.doc_sentences and rng.random() < 0.5:  # a label the judge lacked
            key = stored.record.doc_sentences[-1][0]
            history.set_label(db, stored.rowid, "relevant", key, True, "tester")


def check_every_switch(db, dataset: str) -> None:
    """Rows and stats equal the full recompute's; the sums of the metrics the change
    rewrote too, and the other sums are left as they were (running sums moved label by
    label can differ from a rebuild in the last bit: docs/architecture.md)."""
    assert metric_stats_writes.complete(db.conn, dataset)
    for name, value in SWITCHES:
        before = snapshot(db.conn)[1]
        old = settings.get_all(db, dataset)[name]
        metric_writes.put_setting(db, dataset, name, value)
        (rows, totals, stats), (full_rows, full_totals, full_stats) = (
            snapshot(db.conn),
            recomputed(db, dataset),
        )
        assert rows == full_rows, (name, value)
        assert stats == full_stats, (name, value)
        decided = metric_stats_writes.changed(name, value, old)
        assert [t for t in totals if t[2] in decided] == [
            t for t in full_totals if t[2] in decided
        ], (name, value)
        assert [t for t in totals if t[2] not in decided] == [
            t for t in before if t[2] not in decided
        ], (name, value)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_switch_equals_full_recompute_on_fixture(tmp_path: Path, path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} is not here")
    db_path = tmp_path / "f.ragreview.db"
    result = CliRunner().invoke(cli, ["import", str(path), "--db", str(db_path)])
    assert result.exit_code == 0, result.output
    db = open_database(db_path)
    (dataset,) = [d for (d,) in db.conn.execute("SELECT name FROM datasets")]
    review_some(db, dataset, random.Random(7))
    check_every_switch(db, dataset)


def generated(rng: random.Random, n: int) -> list[ImportItem]:
    """TRACe, RGB and long-form records with edge cases: no relevant sentence, extra
    listed keys, stored scores or none, noise rate 1, counterfactuals, abstentions."""
    items = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            keys = [f"0{chr(97 + j)}" for j in range(rng.randint(0, 6))]
            obj: dict = {
                "id": f"t{i}",
                "task": "trace",
                "documents": [{"sentences": [[k, "x" * rng.randint(1, 9)] for k in keys]}],
                "response": [["a", "one"], ["b", "two"]],
                "scores": {},
            }
            if rng.random() < 0.7:
                obj["scores"] = {
                    "stored.relevance_score": rng.random(),
                    "stored.utilization_score": rng.random(),
                    "stored.completeness_score": rng.random(),
                    "stored.adherence_score": float(rng.random() < 0.5),
                }
            if rng.random() < 0.3:
                obj["scores"]["ragbench.relevant_listed"] = rng.randint(0, 8)
            judge = {
                "relevant": {k: True for k in keys if rng.random() < 0.5},
                "utilized": {k: True for k in keys if rng.random() < 0.4},
                "supported": {k: rng.random() < 0.8 for k in ("a", "b") if rng.random() < 0.9},
            }
        elif kind == 1:
            parts = rng.randint(1, 3)
            obj = {
                "id": f"r{i}",
                "task": rng.choice(["rgb-noise", "rgb-negative", "rgb-counterfactual"]),
                "noise_rate": rng.choice([0.0, 0.4, 1.0]),
                "answer_parts": [[f"ans{j}"] for j in range(parts)],
                "counterfactual": ["wrong"],
                "response": [["a", rng.choice(["it is wrong", "ans0", ""])]],
            }
            judge = {
                "rejected": {"*": rng.random() < 0.3},
                "part_matched": {f"p{j}": rng.random() < 0.6 for j in range(parts)},
                "error_detected": {"*": rng.random() < 0.5},
            }
        else:
            facts = rng.randint(0, 5)
            obj = {
                "id": f"l{i}",
                "task": "longform",
                "facts": [[f"f{j + 1}", "x", None] for j in range(facts)],
                "scores": {"stored.f1_64": rng.random()} if rng.random() < 0.5 else {},
            }
            judge = {"fact": {f"f{j + 1}": rng.choice(["S", "NS", "IR"]) for j in range(facts)}}
        record = parse_record(obj)
        items.append(ImportItem(i + 1, record, check_layer(record, judge, "judge")))
    return items


def test_switch_equals_full_recompute_on_generated(tmp_path: Path) -> None:
    rng = random.Random(2024)
    db = open_database(tmp_path / "g.ragreview.db")
    importer.import_records(db, "gen", "ragreview", None, generated(rng, 300))
    review_some(db, "gen", rng)
    check_every_switch(db, "gen")


def test_a_dataset_without_stats_is_recomputed_once_then_switches_from_stats(
    tmp_path: Path,
) -> None:
    db = open_database(tmp_path / "o.ragreview.db")
    importer.import_records(db, "old", "ragreview", None, generated(random.Random(3), 60))
    with db.conn:  # as a DB from before m012 has it
        db.conn.execute("DELETE FROM metric_stats")
    assert not metric_stats_writes.complete(db.conn, "old")
    done: list[int] = []
    metric_writes.put_setting(db, "old", "trace.variant", "length", on_progress=done.append)
    assert sum(done) == 60  # the record-by-record path, with progress
    assert snapshot(db.conn) == recomputed(db, "old")
    check_every_switch(db, "old")


def test_per_record_lines_hold_every_stored_row(tmp_path: Path) -> None:
    """``iter_record_values`` reads a record's effective rows only when it has human
    labels; the lines still hold exactly the stored rows of both layers."""
    db = open_database(tmp_path / "p.ragreview.db")
    importer.import_records(db, "p", "ragreview", None, generated(random.Random(5), 90))
    review_some(db, "p", random.Random(6))
    rowids = [r for (r,) in db.conn.execute("SELECT rowid FROM records ORDER BY position")]
    stored = metric_reads.records_values(db, rowids)
    lines = list(metric_reads.iter_record_values(db, "p"))
    assert [(line["judge"], line["effective"]) for line in lines] == [
        (stored[r]["judge"], stored[r]["effective"]) for r in rowids
    ]
    assert any(line["judge"] != line["effective"] for line in lines)
