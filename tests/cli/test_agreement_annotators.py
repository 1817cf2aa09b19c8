"""``ragreview agreement`` on an InspectorRAGet file the reviewer rated: the reviewer
against each of the file's annotators and against their aggregate, per human metric,
checked against ``sklearn.metrics.cohen_kappa_score(weights="quadratic")`` and
``krippendorff.alpha(level_of_measurement="ordinal")``; no empty table printed."""

from __future__ import annotations

import json
import shutil

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from ragreview.core.annotator_agreement import aggregate, numeric_values
from ragreview.store import history, open_database, reviewer_layers
from ragreview.store.records import loads

from .agreement_helpers import quick, run

RATED = ("fluency", "faithfulness", "win-rate")
REVIEWED = 60  # the first records in file order


def _rate(db) -> None:
    """The reviewer's values: mostly the first annotator's, every third a value of
    their own (so the statistics are neither 1 nor undefined)."""
    for i, (rowid, data, given) in enumerate(reviewer_layers.layers(db, "clapnq_v1")[:REVIEWED]):
        rubric = loads(data)["rubric"]
        first = next(iter(given.values()))
        for name in RATED:
            entry = rubric[name]
            if entry["kind"] == "choice":
                value = entry["choices"][i % 4] if i % 3 == 0 else first[name]
            else:
                value = (i * 10) % 110 if i % 3 == 0 else first[name]
            history.set_label(db, rowid, name, "*", value, "alice", session="t")
        history.mark(db, rowid, "reviewed", "alice", "t")


def _expected(db, name: str) -> tuple[dict, tuple]:
    """Per annotator, and for the aggregate, the (reviewer, theirs) numbers."""
    per: dict[str, list[tuple[float, float]]] = {}
    agg: list[tuple[float, float]] = []
    for rowid, data, given in reviewer_layers.layers(db, "clapnq_v1")[:REVIEWED]:
        entry = loads(data)["rubric"][name]
        numeric = numeric_values(entry)
        (mine,) = db.conn.execute(
            "SELECT value FROM human_labels WHERE record = ? AND name = ?", (rowid, name)
        ).fetchone()
        mine = json.loads(mine)
        own = float(numeric.get(mine, mine))
        for who, layer in given.items():
            if name in layer:
                per.setdefault(who, []).append((own, float(numeric.get(layer[name], layer[name]))))
        theirs = aggregate([layer[name] for layer in given.values() if name in layer],
                           entry["aggregator"], numeric)  # fmt: skip
        if theirs is not None:
            agg.append((own, theirs))
    levels = sorted(numeric.values())
    return per, (agg, levels)


def _check(got: dict, pairs: list[tuple[float, float]], levels: list[float]) -> None:
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    order = sorted(set(levels) | set(a) | set(b))
    assert got["n"] == len(pairs)
    # sklearn weighs by the labels' positions in ``labels``: pass each value's position
    # (an average of annotators' win-rates is no class label sklearn accepts as such)
    rank = {v: i for i, v in enumerate(order)}
    kappa = cohen_kappa_score(
        [rank[v] for v in a], [rank[v] for v in b], weights="quadratic", labels=range(len(order))
    )
    assert got["weighted_kappa"] == pytest.approx(kappa, abs=1e-9)
    alpha = krippendorff.alpha(
        reliability_data=np.array([a, b], float), level_of_measurement="ordinal"
    )
    assert got["alpha_ordinal"] == pytest.approx(alpha, abs=1e-9)


def test_reviewer_against_each_annotator_and_the_aggregate(tmp_path, fixtures_dir):
    path = tmp_path / "clapnq_v1.json"
    shutil.copy(fixtures_dir / "inspectorraget" / "clapnq_v1.json", path)
    quick("import", str(path))
    db = open_database(tmp_path / "clapnq_v1.ragreview.db")
    _rate(db)
    db.conn.close()

    report = json.loads(run("agreement", str(path), "--json").stdout)
    block = report["reviewer_vs_annotators"]
    assert sorted(block) == sorted(RATED)  # answer_relevance: no value of the reviewer's
    db = open_database(tmp_path / "clapnq_v1.ragreview.db")
    for name in RATED:
        per, (agg, levels) = _expected(db, name)
        assert block[name]["records"] == REVIEWED
        assert sorted(block[name]["annotators"]) == sorted(per)
        for who, pairs in per.items():
            _check(block[name]["annotators"][who], pairs, levels)
        _check(block[name]["aggregate"], agg, levels)
    # a hand-checked point: the reviewer copies the first annotator two times in three
    assert block["fluency"]["aggregate"]["weighted_kappa"] < 1

    text = run("agreement", str(path)).stdout
    assert "You vs the file's annotators" in text and "aggregate (majority)" in text
    assert "Reviewers vs each other" not in text  # the annotators are no reviewers' merge
    assert "corrected estimate" not in text  # no review draw: no estimate table
