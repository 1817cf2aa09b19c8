"""``ragreview merge``: reviewers' files combined, κ/α between them, conflicts."""

from __future__ import annotations

import json

import pytest

from ragreview.services import merging
from ragreview.store import history, open_database
from ragreview.store import records as store_records

from .agreement_helpers import quick, run, trace_record, write_jsonl


@pytest.fixture
def reviews(tmp_path):
    path = write_jsonl(
        tmp_path / "res.jsonl",
        [trace_record("t1", relevant=("0a", "0b")), trace_record("t2"), trace_record("t3")],
    )
    dbs = {name: tmp_path / f"{name}.db" for name in ("ann", "bob", "cy")}
    for db in dbs.values():
        quick("import", str(path), "--db", str(db))

    def label(who, rid, name, target, value):
        quick("label", str(dbs[who]), rid, name, target, value, "--reviewer", who)

    label("ann", "t1", "relevant", "0c", "true")
    label("bob", "t1", "relevant", "0c", "true")  # agrees with ann
    label("bob", "t1", "relevant", "0b", "false")  # ann kept the judge's true
    label("bob", "t2", "supported", "b", "false")  # ann kept the judge's true
    label("cy", "t1", "relevant", "0a", "false")
    label("ann", "t3", "supported", "a", "false")  # only ann reviews t3
    for who, rids in {"ann": ("t1", "t2", "t3"), "bob": ("t1", "t2"), "cy": ("t1",)}.items():
        for rid in rids:
            quick("mark", str(dbs[who]), rid, "--reviewed", "--reviewer", who)
    return path, dbs


def test_two_reviewers_merge_with_conflicts_and_kappa(reviews, tmp_path):
    _, dbs = reviews
    into = tmp_path / "merged.db"
    out = json.loads(
        run("merge", str(dbs["ann"]), str(dbs["bob"]), "--into", str(into), "--json").stdout
    )
    assert out["records"] == 3
    assert out["conflicts"] == 2  # t1 relevant 0b, t2 supported b
    assert [r["reviewer"] for r in out["reviewers"]] == ["ann", "bob"]
    rel = out["agreement"]["res"]["labels"]["relevant"]
    # t1 0a..0c: (T,T) (T,F) (T,T); t2: (T,T) (F,F) (F,F). p_o = 5/6,
    # p_e = (4/6)(3/6) + (2/6)(3/6) = 1/2, κ = (5/6 − 1/2) / (1/2) = 2/3
    assert rel["items"] == 6
    assert rel["kappa"] == pytest.approx(2 / 3)
    assert rel["percent_agreement"] == pytest.approx(5 / 6)

    db = open_database(into)
    t1 = store_records.find(db, "t1")
    t3 = store_records.find(db, "t3")
    assert t1.human == {"relevant": {"0c": True}}  # the agreed change, not the conflict
    assert t1.status == "unreviewed"  # waits for adjudication
    assert t3.human == {"supported": {"a": False}} and t3.status == "reviewed"
    assert t3.reviewed_by == "ann"
    conflicts = merging.conflicts(db, "res")
    assert [(c.record, c.name, c.target) for c in conflicts] == [
        ("t1", "relevant", "0b"),
        ("t2", "supported", "b"),
    ]
    assert conflicts[0].values == {"ann": True, "bob": False}
    assert conflicts[0].current is True and not conflicts[0].adjudicated
    assert merging.conflict_rowids(db, "res") == [t1.rowid, store_records.find(db, "t2").rowid]

    # an adjudicator's choice is an ordinary label event
    history.set_label(db, t1.rowid, "relevant", "0b", False, "dana", reason="adjudicated")
    assert [c.record for c in merging.conflicts(db, "res", open_only=True)] == ["t2"]
    assert merging.conflicts(db, "res")[0].adjudicated
    assert merging.conflicts(db, "res")[0].current is False

    report = json.loads(run("agreement", str(into), "--json").stdout)
    assert report["reviewers"]["conflicts"] == 2 and report["reviewers"]["open_conflicts"] == 1
    assert report["reviewers"]["labels"]["relevant"]["kappa"] == pytest.approx(2 / 3)
    assert report["records"] == 1  # only t3 is reviewed in the merged file so far


def test_three_reviewers_alpha_equals_krippendorff_package(reviews, tmp_path):
    krippendorff = pytest.importorskip("krippendorff")
    np = pytest.importorskip("numpy")
    _, dbs = reviews
    into = tmp_path / "three.db"
    db = open_database(into)
    merging.merge_into(db, [str(dbs[w]) for w in ("ann", "bob", "cy")])
    human = merging.human_agreement(db, "res")
    assert human["reviewers"] == ["ann", "bob", "cy"]
    assert human["records"] == 2  # t3 was reviewed by ann alone
    nan = np.nan
    # relevant on t1 0a 0b 0c, t2 0a 0b 0c (cy did not review t2)
    relevant = np.array(
        [
            [1, 1, 1, 1, 0, 0],  # ann
            [1, 0, 1, 1, 0, 0],  # bob
            [0, 1, 0, nan, nan, nan],  # cy (0c: judge's absent = false)
        ]
    )
    expected = krippendorff.alpha(reliability_data=relevant, level_of_measurement="nominal")
    assert human["labels"]["relevant"]["alpha"] == pytest.approx(expected, abs=1e-12)
    assert "kappa" not in human["labels"]["relevant"]
    # supported on t1 a b, t2 a b: only bob's t2 b differs
    supported = np.array([[1, 1, 1, 1], [1, 1, 1, 0], [1, 1, nan, nan]])
    expected = krippendorff.alpha(reliability_data=supported, level_of_measurement="nominal")
    assert human["labels"]["supported"]["alpha"] == pytest.approx(expected, abs=1e-12)


def test_merge_refuses_different_records(reviews, tmp_path):
    path, dbs = reviews
    changed = tmp_path / "changed"
    changed.mkdir()
    record = trace_record("t1")
    record["question"] = "a different question?"
    src = write_jsonl(changed / "res.jsonl", [record])
    quick("import", str(src), "--db", str(changed / "x.db"))
    proc = run(
        "merge", str(dbs["ann"]), str(changed / "x.db"), "--into", str(tmp_path / "m.db"),
        check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "different content for record 't1'" in proc.stderr
    assert "Traceback" not in proc.stderr
    # a refused merge leaves no database behind that a later merge would call taken
    assert not list(tmp_path.glob("m.db*"))
    proc = run("merge", str(dbs["ann"]), "--into", str(tmp_path / "m2.db"), check=False)
    assert proc.returncode == 1 and "at least two" in proc.stderr
    assert not list(tmp_path.glob("m2.db*"))


def test_merge_into_a_file_holding_the_dataset_is_refused(reviews, tmp_path):
    _, dbs = reviews
    into = tmp_path / "m.db"
    run("merge", str(dbs["ann"]), str(dbs["bob"]), "--into", str(into))
    before = into.read_bytes()
    proc = run("merge", str(dbs["ann"]), str(dbs["bob"]), "--into", str(into), check=False)
    assert proc.returncode == 1 and "already holds dataset 'res'" in proc.stderr
    assert into.read_bytes() == before  # a file that was there stays, unchanged
    text = run("merge", str(dbs["ann"]), str(dbs["cy"]), "--into", str(tmp_path / "n.db")).stdout
    assert "conflicting items" in text and "ragreview open" in text


def test_conflicts_command_lists_and_follows_adjudication(reviews, tmp_path):
    _, dbs = reviews
    into = tmp_path / "m.db"
    run("merge", str(dbs["ann"]), str(dbs["bob"]), "--into", str(into))
    lines = run("conflicts", str(into), "--json").stdout.splitlines()
    first = json.loads(lines[0])
    assert first == {
        "record": "t1",
        "name": "relevant",
        "target": "0b",
        "values": {"ann": True, "bob": False},
        "current": True,
        "adjudicated": False,
    }
    quick("label", str(into), "t2", "supported", "b", "false", "--reviewer", "dana")
    text = run("conflicts", str(into), "--open").stdout
    assert text.strip() == "t1 relevant 0b: ann=true bob=false (now true)"


def _refused(*args: str) -> str:
    """The one line a refused merge prints (exit 1, no traceback)."""
    proc = run("merge", *args, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_merge_refuses_the_same_review_twice(reviews, tmp_path):
    """Merged with itself, a reviewer would agree with themselves (κ = α = 1): refused
    by path, by file (a hard link) and by content (a copy)."""
    _, dbs = reviews
    ann = dbs["ann"]
    into = str(tmp_path / "m.db")
    line = _refused(str(ann), str(ann), "--into", into)
    assert line == f"Error: {ann} is given twice: merge different reviews"
    other_spelling = f"{ann.parent}/./{ann.name}"  # (pathlib would drop the ".")
    line = _refused(str(ann), other_spelling, "--into", into)
    assert line == f"Error: {other_spelling} and {ann} are the same file: merge different reviews"
    link = tmp_path / "link.db"
    link.hardlink_to(ann)
    line = _refused(str(ann), str(link), "--into", into)
    assert line == f"Error: {link} and {ann} are the same file: merge different reviews"
    copy = tmp_path / "copy.db"
    copy.write_bytes(ann.read_bytes())
    line = _refused(str(ann), str(dbs["bob"]), str(copy), "--into", into)
    assert line == (
        f"Error: {copy} and {ann} hold the same review (the same database, copied?): "
        "merge different reviewers' files"
    )


def test_merge_refuses_files_with_no_dataset_in_common(reviews, tmp_path):
    path, dbs = reviews
    renamed = tmp_path / "renamed.db"  # the same records, under another dataset name
    quick("import", str(path), "--db", str(renamed), "--dataset", "res2")
    line = _refused(str(dbs["ann"]), str(renamed), "--into", str(tmp_path / "m.db"))
    assert line == (
        f"Error: {renamed} and {dbs['ann']} have no dataset in common ({dbs['ann']}: 'res'; "
        f"{renamed}: 'res2'): they hold the same records under another dataset name "
        "(import both under one --dataset)"
    )
    other = write_jsonl(tmp_path / "other.jsonl", [trace_record("o1")])
    quick("import", str(other), "--db", str(tmp_path / "other.db"))
    line = _refused(str(dbs["ann"]), str(tmp_path / "other.db"), "--into", str(tmp_path / "n.db"))
    assert line.endswith(
        f"{dbs['ann']}: 'res'; {tmp_path / 'other.db'}: 'other'): merge reviews of the same "
        "imported dataset"
    )


def test_settings_warning_only_when_settings_differ(reviews, tmp_path):
    _, dbs = reviews
    args = [str(dbs["ann"]), str(dbs["bob"]), "--json"]
    out = json.loads(run("merge", *args, "--into", str(tmp_path / "m.db")).stdout)
    assert out["warnings"] == []  # the same settings: nothing to say
    quick("settings", str(dbs["bob"]), "trace.variant=length")
    proc = run("merge", *args[:2], "--into", str(tmp_path / "n.db"))
    assert proc.returncode == 0
    assert f"warning: {dbs['bob']}: settings of dataset 'res' differ from {dbs['ann']} " in (
        " ".join(proc.stdout.split())
    )
    assert "(trace.variant); kept those of" in " ".join(proc.stdout.split())
    settings = quick("settings", str(tmp_path / "n.db"))
    assert "trace.variant=ragbench" in settings  # the first file's
