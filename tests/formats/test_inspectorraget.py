"""InspectorRAGet experiments (v1 and v2): records, annotators' layers, agreement
against the reference packages (``krippendorff``, ``scipy.stats``), and the round trip."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from scipy import stats

from ragreview.core import annotator_agreement as aa
from ragreview.store import open_database

from .helpers import FIXTURES, run

IRG = FIXTURES / "inspectorraget"
FILES = [
    pytest.param(IRG / "clapnq_v1.json", "evaluations", "annotations", id="v1"),
    pytest.param(IRG / "rag_model_performance_v2.json", "results", "scores", id="v2"),
]
HUMAN = ("fluency", "answer_relevance", "faithfulness", "win-rate")


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """Each fixture copied and imported once (``--strict``): {name: (input, db)}."""
    out = {}
    for param in FILES:
        path = param.values[0]
        tmp = tmp_path_factory.mktemp(path.stem)
        copy = tmp / path.name
        shutil.copy(path, copy)
        result = run("import", copy, "--strict")
        assert result.exit_code == 0, result.output
        out[path.name] = (copy, copy.with_name(copy.stem + ".ragreview.db"))
    return out


def fresh_copy(imported, path: Path, tmp_path: Path) -> tuple[Path, Path]:
    source, db = imported[path.name]
    shutil.copy(source, tmp_path / source.name)
    shutil.copy(db, tmp_path / db.name)
    return tmp_path / source.name, tmp_path / db.name


@pytest.mark.parametrize("path, key, scores_field", FILES)
def test_one_record_per_task_and_model_one_reviewer_per_annotator(
    imported, path, key, scores_field
) -> None:
    doc = json.loads(path.read_text())
    _, db_path = imported[path.name]
    db = open_database(db_path)
    ids = [r for (r,) in db.conn.execute("SELECT id FROM records ORDER BY position")]
    assert ids == [f"{e['task_id']}/{e['model_id']}" for e in doc[key]]
    annotators = {who for e in doc[key] for m in HUMAN for who in e[scores_field].get(m, {})}
    reviewers = [w for (w,) in db.conn.execute("SELECT reviewer FROM merge_sources")]
    assert sorted(reviewers) == sorted(annotators) and len(annotators) == 7
    first = doc[key][0]
    rowid = db.conn.execute("SELECT rowid FROM records WHERE position = 1").fetchone()[0]
    stored = {
        (who, name): (json.loads(value), reason)
        for who, name, value, reason in db.conn.execute(
            "SELECT s.reviewer, l.name, l.value, l.reason FROM reviewer_labels l "
            "JOIN merge_sources s ON s.id = l.source WHERE l.record = ?",
            (rowid,),
        )
    }
    expected = {}
    for name in HUMAN:
        for who, entry in first[scores_field][name].items():
            reason = first[scores_field].get(f"{name}_reason", {}).get(who, {}).get("value")
            expected[(who, name)] = (entry["value"], reason or None)
    assert stored == expected
    data = json.loads(
        db.conn.execute("SELECT data FROM records WHERE rowid = ?", (rowid,)).fetchone()[0]
    )
    assert data["scores"]["stored.RougeL"] == first[scores_field]["RougeL"]["system"]["value"]
    assert data["scores"]["stored.answerability_accuracy"] == 0  # "False Negative" -> 0
    assert data["rubric"]["fluency"]["choices"] == ["1", "2", "3", "4"]
    assert data["model"] == first["model_id"] and data["question"]
    assert data["documents"][0]["sentences"][0][0] == "0a"


def _file_units(doc: dict, key: str, field: str, metric: str) -> tuple[list, list]:
    """Annotators x evaluations matrices (nominal codes, numeric values) built from the
    file alone."""
    declared = {m["name"]: m for m in doc["metrics"]}[metric]
    numeric = {v["value"]: v["numeric_value"] for v in declared.get("values", [])}
    annotators = sorted({w for e in doc[key] for w in e[field].get(metric, {})})
    nominal, ordinal = [], []
    codes: dict = {}
    for who in annotators:
        row_n, row_o = [], []
        for e in doc[key]:
            entry = e[field].get(metric, {}).get(who)
            if entry is None:
                row_n.append(np.nan)
                row_o.append(np.nan)
            else:
                v = entry["value"]
                row_n.append(codes.setdefault(v, len(codes)))
                row_o.append(float(numeric.get(v, v)))
        nominal.append(row_n)
        ordinal.append(row_o)
    return nominal, ordinal


@pytest.mark.parametrize("path, key, scores_field", FILES)
def test_agreement_matches_krippendorff_and_scipy(imported, path, key, scores_field) -> None:
    _, db_path = imported[path.name]
    result = run("agreement", db_path, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["annotators"]
    assert sorted(report) == sorted(HUMAN)
    doc = json.loads(path.read_text())
    for metric in HUMAN:
        nominal, ordinal = _file_units(doc, key, scores_field, metric)
        block = report[metric]
        assert block["annotators"] == 7 and block["weighted_kappa"] is None
        want_n = krippendorff.alpha(reliability_data=nominal, level_of_measurement="nominal")
        want_o = krippendorff.alpha(reliability_data=ordinal, level_of_measurement="ordinal")
        assert block["alpha_nominal"] == pytest.approx(want_n, abs=1e-9)
        assert block["alpha_ordinal"] == pytest.approx(want_o, abs=1e-9)
        # correlations: the pairs rebuilt from the file, the statistics from scipy
        declared = {m["name"]: m for m in doc["metrics"]}
        entry = declared[metric]
        numeric = {v["value"]: v["numeric_value"] for v in entry.get("values", [])}
        for auto in ("RougeL", "Recall", "Bert-KPrec", "Length", "answerability_accuracy"):
            auto_numeric = {
                v["value"]: v["numeric_value"] for v in declared[auto].get("values", [])
            }
            xs, ys = [], []
            for e in doc[key]:
                values = [a["value"] for a in e[scores_field].get(metric, {}).values()]
                agg = aa.aggregate(values, entry["aggregator"], numeric)
                score = e[scores_field][auto]["system"]["value"]
                if agg is not None:
                    xs.append(float(auto_numeric.get(score, score)))
                    ys.append(agg)
            got = block["correlations"][auto]
            assert got["n"] == len(xs) > 300
            assert got["spearman"] == pytest.approx(stats.spearmanr(xs, ys).statistic, abs=1e-9)
            assert got["kendall"] == pytest.approx(stats.kendalltau(xs, ys).statistic, abs=1e-9)


@pytest.mark.parametrize("path, key, scores_field", FILES)
def test_export_round_trips_json_equal(imported, path, key, scores_field, tmp_path) -> None:
    _, db_path = fresh_copy(imported, path, tmp_path)
    out = tmp_path / "out.json"
    assert run("export", db_path, "--out", out).exit_code == 0
    assert json.loads(out.read_text()) == json.loads(path.read_text())


@pytest.mark.parametrize("path, key, scores_field", FILES)
def test_an_override_changes_only_that_annotation(imported, path, key, scores_field, tmp_path):
    _, db_path = fresh_copy(imported, path, tmp_path)
    doc = json.loads(path.read_text())
    first = doc[key][0]
    rid = f"{first['task_id']}/{first['model_id']}"
    who = next(iter(first[scores_field]["fluency"]))
    old = first[scores_field]["fluency"][who]["value"]
    new = "1" if old != "1" else "2"
    result = run("label", db_path, rid, "fluency", "*", new, "--reviewer", who, "--reason", "why")
    assert result.exit_code == 0, result.output
    out = tmp_path / "out.json"
    assert run("export", db_path, "--out", out).exit_code == 0
    got = json.loads(out.read_text())
    first[scores_field]["fluency"][who]["value"] = new
    first[scores_field]["fluency_reason"][who]["value"] = "why"
    assert got == doc
    # a reviewer the file does not know gets an annotation of their own
    run("label", db_path, rid, "win-rate", "*", "25", "--reviewer", "alice")
    assert run("export", db_path, "--out", out, "--force").exit_code == 0
    got = json.loads(out.read_text())
    first[scores_field]["win-rate"]["alice"] = {"value": 25}
    assert got == doc


def test_an_override_the_file_cannot_hold_refuses_the_export(imported, tmp_path) -> None:
    _, db_path = fresh_copy(imported, IRG / "clapnq_v1.json", tmp_path)
    rid = open_database(db_path).conn.execute("SELECT id FROM records LIMIT 1").fetchone()[0]
    assert run("label", db_path, rid, "relevant", "0a", "true").exit_code == 0
    result = run("export", db_path, "--out", tmp_path / "out.json")
    assert result.exit_code == 1
    assert rid in result.output and "relevant" in result.output
    assert not (tmp_path / "out.json").exists() or (tmp_path / "out.json").stat().st_size == 0


def test_values_outside_the_declared_set_are_refused(imported, tmp_path) -> None:
    _, db_path = fresh_copy(imported, IRG / "clapnq_v1.json", tmp_path)
    rid = open_database(db_path).conn.execute("SELECT id FROM records LIMIT 1").fetchone()[0]
    result = run("label", db_path, rid, "fluency", "*", "5")
    assert result.exit_code == 1 and '"1", "2", "3", "4"' in result.output
    result = run("label", db_path, rid, "win-rate", "*", "101")
    assert result.exit_code == 1 and "0 to 100" in result.output


def test_a_bad_evaluation_is_reported_and_the_rest_import(tmp_path) -> None:
    doc = json.loads((IRG / "clapnq_v1.json").read_text())
    doc["evaluations"] = doc["evaluations"][:5]
    doc["evaluations"][2]["annotations"]["fluency"]["46542882"] = {"value": "9"}
    doc["evaluations"][3]["task_id"] = "nowhere"
    path = tmp_path / "bad.json"
    # one evaluation a line (evaluations[i] on line i + 2): errors name the line
    head = json.dumps({k: v for k, v in doc.items() if k != "evaluations"})[:-1]
    rows = ",\n".join(json.dumps(e) for e in doc["evaluations"])
    path.write_text(f'{head}, "evaluations": [\n{rows}\n]}}\n')
    result = run("import", path)
    assert result.exit_code == 1
    assert f"{path}:4: fluency.46542882:" in result.output
    assert f"{path}:5: evaluations[3].task_id: no task 'nowhere'" in result.output
    n = open_database(tmp_path / "bad.ragreview.db").conn.execute("SELECT count(*) FROM records")
    assert n.fetchone()[0] == 3
    assert run("import", path, "--strict").exit_code == 1


# -- the statistics on hand-computed cases ------------------------------------------------


def test_ordinal_alpha_hand_case() -> None:
    # Krippendorff (2011) style: 2 coders, 4 units; checked against the package
    units = [[1, 1], [2, 3], [3, 3], [4, 2]]
    want = krippendorff.alpha(
        reliability_data=np.array(units, float).T, level_of_measurement="ordinal"
    )
    assert aa.krippendorff_alpha_ordinal(units) == pytest.approx(want, abs=1e-12)
    assert aa.krippendorff_alpha_ordinal([[1, 1], [1, None]]) is None  # nothing to expect


def test_weighted_kappa_hand_case() -> None:
    # quadratic weights, 3 categories: O = [[1,1,0],[0,1,0],[0,0,1]] over 4 items
    pairs = [(1, 1), (1, 2), (2, 2), (3, 3)]
    # rows (1,2,3) = (2,1,1), cols = (1,2,1); Σ w O = 1; Σ w E = Σ w_ij r_i c_j / 4 = 20/4
    assert aa.weighted_kappa(pairs, [1, 2, 3]) == pytest.approx(1 - 1 / 5)


def test_kendall_matches_scipy_with_ties() -> None:
    x = [1, 2, 2, 3, 4, 4, 5]
    y = [2, 1, 2, 3, 3, 5, 4]
    assert aa.kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


@pytest.mark.parametrize(
    "values, want",
    [
        (["4", "4", "4"], "4"),  # unanimous
        (["4", "3", "4"], "4"),  # two close values
        (["1", "2", "3"], None),  # everyone differs: Indeterminate
        (["1", "4", "1"], "1"),  # two values far apart: the most common, low confidence
        (["2", "3"], None),  # two annotators who differ
        (["1", "1", "2", "4"], None),  # three distinct values among four
        (["3", "3", "1", "1"], "1"),  # a tie: JavaScript key order puts "1" first
        (["1", "2", "3", "3"], None),  # more distinct values than half the annotators
    ],
)
def test_majority_follows_inspectorraget(values, want) -> None:
    numeric = {str(i): i for i in range(1, 5)}
    assert aa.majority(values, numeric) == want


def test_aggregators() -> None:
    numeric = {str(i): i for i in range(1, 5)}
    assert aa.aggregate(["1", "4"], "median", numeric) == 1.0  # the lower middle value
    assert aa.aggregate([0.0, 100.0, 50.0], "average", {}) == 50.0
    assert aa.aggregate(["1", "2", "3"], "majority", numeric) is None
    assert aa.aggregate([], "average", {}) is None


def test_reimport_replaces_the_changed_annotations_only(tmp_path) -> None:
    doc = json.loads((IRG / "clapnq_v1.json").read_text())
    doc["evaluations"] = doc["evaluations"][:6]
    path = tmp_path / "exp.json"
    path.write_text(json.dumps(doc))
    assert run("import", path).exit_code == 0
    first = doc["evaluations"][0]["annotations"]
    who = next(iter(first["fluency"]))
    first["fluency"][who]["value"] = "1"
    gone = next(iter(doc["evaluations"][1]["annotations"]["fluency"]))
    for metric in HUMAN:
        doc["evaluations"][1]["annotations"][metric].pop(gone)
    path.write_text(json.dumps(doc))
    moved = tmp_path / "elsewhere"  # the same file, imported from another place
    moved.mkdir()
    shutil.copy(path, moved / "exp.json")
    db_path = tmp_path / "exp.ragreview.db"
    result = run("import", moved / "exp.json", "--db", db_path, "--dataset", "exp")
    assert result.exit_code == 0 and "2 changed" in result.output
    db = open_database(db_path)
    reviewers = [w for (w,) in db.conn.execute("SELECT reviewer FROM merge_sources")]
    assert sorted(reviewers) == sorted(
        {w for e in doc["evaluations"] for w in e["annotations"]["fluency"]} | {gone}
    )
    values = dict(
        db.conn.execute(
            "SELECT s.reviewer, l.value FROM reviewer_labels l JOIN merge_sources s "
            "ON s.id = l.source WHERE l.record = 1 AND l.name = 'fluency'"
        ).fetchall()
    )
    assert values[who] == '"1"'
    second = db.conn.execute(
        "SELECT count(*) FROM reviewer_labels l JOIN merge_sources s ON s.id = l.source "
        "WHERE l.record = 2 AND s.reviewer = ?",
        (gone,),
    ).fetchone()[0]
    assert second == 0


def test_a_context_without_text_takes_it_from_documents(tmp_path) -> None:
    doc = json.loads((IRG / "rag_model_performance_v2.json").read_text())
    doc["results"] = doc["results"][:1]
    task = next(t for t in doc["tasks"] if t["task_id"] == doc["results"][0]["task_id"])
    context = task["contexts"][0]
    text = context.pop("text")
    assert any(d["document_id"] == context["document_id"] for d in doc["documents"])
    path = tmp_path / "exp.json"
    path.write_text(json.dumps(doc))
    assert run("import", path, "--strict").exit_code == 0
    data = json.loads(
        open_database(tmp_path / "exp.ragreview.db")
        .conn.execute("SELECT data FROM records")
        .fetchone()[0]
    )
    sentences = data["documents"][0]["sentences"]
    assert " ".join(s for _, s in sentences).split() == text.split()
    assert data["response"][0][1].startswith(doc["results"][0]["output"][0]["content"][:20])
