"""The "add a family" recipe of docs/contributing.md, followed by a test: a toy family
declared in this module only (its labels, key, panel, metric function, variant and
stats) and registered with ``core.families.register``. A JSONL of its records opens
through ``ragreview.open``, a label changes, the metric follows, the export holds the
label; its variant is a setting; its stats get columns without a migration, also in a
database an older build (main at f2af56a) wrote."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import ragreview
from ragreview.core import families
from ragreview.core.families import Family, KeyUse, Variant
from ragreview.core.labels import CATALOGUE, LabelSpec, Layer
from ragreview.core.metrics.common import Values
from ragreview.core.record import Record
from ragreview.store import metric_writes, open_database

ROOT = Path(__file__).resolve().parent.parent
OLD_DB = ROOT / "fixtures" / "db" / "demo_main_f2af56a.ragreview.db"

# -- the toy family: everything a family declares, in one place ----------------------


def toy_metrics(
    record: Record,
    labels: Layer,
    settings: Mapping[str, Any],
    *,
    judge: Layer | None = None,
    into: dict[str, Any] | None = None,
) -> Values:
    """``toy.pass_rate``: the share of judged response sentences that pass (``strict``:
    1 when all pass, else 0); undefined when none is judged."""
    verdicts = labels.get("toy_ok") or {}
    keys = [k for k, _ in record.response]
    passed = sum(1 for k in keys if verdicts.get(k) is True)
    judged = sum(1 for k in keys if k in verdicts)
    if into is not None:
        into.update({"toy.passed": passed, "toy.judged": judged})
    if not judged:
        return {"toy.pass_rate": None}
    if settings.get("toy.strict"):
        return {"toy.pass_rate": 1.0 if passed == judged else 0.0}
    return {"toy.pass_rate": passed / judged}


TOY = Family(
    "toy",
    "Toy judge",
    catalogue=(LabelSpec("toy_ok", "response", "bool", "toy", "the response sentence passes"),),
    keys=(KeyUse("toggle-supported", "s", "passes", {"response": "toy_ok"}),),
    item_labels={"response": ("toy_ok",)},
    metrics=("toy.",),
    settings=("toy.strict",),
    compute=toy_metrics,
    stats=(("toy.passed", "INTEGER"), ("toy.judged", "INTEGER")),
    variants=(Variant("toy.strict", False, (False, True)),),
    unclaimed=False,  # its key only on its own records
)


@pytest.fixture
def toy() -> Iterator[Family]:
    families.register(TOY)
    try:
        yield TOY
    finally:
        families.unregister(TOY.name)


# -- a file of its records ------------------------------------------------------------


def toy_file(folder: Path) -> Path:
    rows = [
        {
            "id": "t1",
            "task": "toy",
            "question": "Two facts?",
            "response": [["a", "One."], ["b", "Two."]],
            "labels": {"judge": {"toy_ok": {"a": True, "b": True}}},
        },
        {
            "id": "t2",
            "task": "toy",
            "question": "One fact?",
            "response": [["a", "Only."]],
            "labels": {"judge": {"toy_ok": {"a": False}}},
        },
    ]
    path = folder / "toy.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def per_record(ds: Any) -> dict[str, tuple[Any, Any]]:
    return {
        r["id"]: (r["judge"].get("toy.pass_rate"), r["effective"].get("toy.pass_rate"))
        for r in ds.metrics(per_record=True)
    }


def test_a_toy_family_opens_labels_recomputes_and_exports(tmp_path: Path, toy: Family) -> None:
    with ragreview.open(toy_file(tmp_path)) as ds:
        assert per_record(ds) == {"t1": (1.0, 1.0), "t2": (0.0, 0.0)}
        assert ds.metrics()["judge"]["toy.pass_rate"] == 0.5
        ds.label("t1", "toy_ok", "b", False, reviewer="tester")
        assert per_record(ds) == {"t1": (1.0, 0.5), "t2": (0.0, 0.0)}
        assert ds.metrics()["effective"]["toy.pass_rate"] == 0.25
        # its variant is a dataset setting; a change recomputes the records
        assert metric_writes.put_setting(ds.db, ds.name, "toy.strict", True)
        assert per_record(ds) == {"t1": (1.0, 0.0), "t2": (0.0, 0.0)}
        stats = ds.db.conn.execute(
            "SELECT layer, toy_passed, toy_judged FROM metric_stats s JOIN records r "
            "ON r.rowid = s.record WHERE r.id = 't1' ORDER BY layer"
        ).fetchall()
        assert stats == [("effective", 1, 2), ("judge", 2, 2)]
        out = tmp_path / "toy.reviewed.jsonl"
        assert ds.export(out) == 2
    exported = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    first = next(r for r in exported if r["id"] == "t1")
    assert first["labels"]["judge"]["toy_ok"] == {"a": True, "b": True}
    assert first["labels"]["human"]["toy_ok"] == {"b": False}


async def test_the_toy_key_labels_it_in_the_review_screen(tmp_path: Path, toy: Family) -> None:
    """The review screen reads the family's declaration: `s` (its one key) sets toy_ok
    on the response sentence under the cursor, the panel's number follows, the footer
    shows its word, and a key of another family writes nothing."""
    from ragreview.tui.widgets.key_bar import KeyBar, StatusLine
    from ragreview.tui.widgets.metrics_panel import MetricsPanel
    from tests.tui.conftest import events, human, make_app, opened, text_of

    o = opened(toy_file(tmp_path))
    app = make_app(o)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.screen.review.stored.id == "t1"
        assert app.screen.review.families == (TOY,)
        panel = app.screen.query_one(MetricsPanel)
        assert panel.values["record"]["toy.pass_rate"] == (1.0, 1.0)
        assert "s passes" in text_of(app.screen.query_one(KeyBar))  # the footer
        rows = app.screen.sentences.rows
        app.screen.sentences.move_to(next(i for i, r in enumerate(rows) if r.item.key == "b"))
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        assert human(o) == {("t1", "toy_ok", "b"): False}
        assert panel.values["record"]["toy.pass_rate"] == (1.0, 0.5)
        before = events(o)
        await pilot.press("f")  # FActScore's key: not on a toy record
        await pilot.pause()
        assert events(o) == before
        assert "not on this record" in text_of(app.screen.query_one(StatusLine))


def test_an_older_database_opens_and_gains_the_columns(tmp_path: Path, toy: Family) -> None:
    path = tmp_path / "demo.ragreview.db"
    shutil.copyfile(OLD_DB, path)
    before = _content(path)
    assert "toy_passed" not in before["columns"]
    db = open_database(path)
    db.conn.close()
    after = _content(path)
    assert after["columns"] == [*before["columns"], "toy_passed", "toy_judged"]
    for table in ("record_metrics", "metric_totals", "human_labels", "settings"):
        assert after[table] == before[table], table
    assert after["metric_stats"] == [(*row, None, None) for row in before["metric_stats"]]
    # opened again: nothing more to add
    db = open_database(path, read_only=True)
    db.conn.close()
    assert _content(path) == after


def test_the_built_in_families_open_an_older_database_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "demo.ragreview.db"
    shutil.copyfile(OLD_DB, path)
    before = _content(path)
    with ragreview.open(path) as ds:
        summary = ds.metrics()
    assert _content(path) == before
    assert summary["effective"]["trace.relevance"] is not None
    assert "toy_ok" not in CATALOGUE


def _content(path: Path) -> dict[str, Any]:
    conn = sqlite3.connect(path)
    try:
        out: dict[str, Any] = {
            "columns": [r[1] for r in conn.execute("PRAGMA table_info(metric_stats)")]
        }
        for table in (
            "record_metrics",
            "metric_totals",
            "metric_stats",
            "human_labels",
            "settings",
        ):
            out[table] = conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3").fetchall()
        return out
    finally:
        conn.close()


def test_a_defaulted_label_registered_after_the_store_counts_in_the_filters(
    tmp_path: Path,
) -> None:
    """``ragreview.store`` is imported above, before this family exists: the disagreement
    filter still reads its default (an absent ``toy_cited`` is False), so a human False
    where the judge said nothing is agreement, and a human True is not."""
    from ragreview.store import browse

    cited = LabelSpec("toy_cited", "response", "bool", "toy", "cites", default=False)
    family = Family(
        "toy",
        "Toy judge",
        catalogue=(*TOY.catalogue, cited),
        keys=TOY.keys,
        item_labels={"response": ("toy_ok", "toy_cited")},
        metrics=TOY.metrics,
        compute=toy_metrics,
        unclaimed=False,
    )
    families.register(family)
    try:
        with ragreview.open(toy_file(tmp_path)) as ds:
            ds.label("t1", "toy_cited", "a", False, reviewer="tester")
            ds.label("t2", "toy_cited", "a", True, reviewer="tester")
            flt = browse.ListFilter(disagreement=True)
            found = browse.rowids(ds.db, ds.name, flt)
            ids = [ds.db.conn.execute("SELECT id FROM records WHERE rowid = ?", (r,)).fetchone()[0]
                   for r in found]  # fmt: skip
        assert ids == ["t2"]
    finally:
        families.unregister(family.name)
