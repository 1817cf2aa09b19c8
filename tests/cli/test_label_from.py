"""``ragreview label PATH --from FILE`` (cli/label_file.py): many label changes in one
call, each checked like the single call, bad lines reported as FILE:LINE: field.
Through CliRunner (tests/cli/conftest.py); the bad-lines case also as a real process."""

from __future__ import annotations

import json

import pytest

from ragreview.store import open_database


def _human(db_path, record_id: str, name: str, target: str):
    db = open_database(db_path)
    row = db.conn.execute(
        "SELECT h.value FROM human_labels h JOIN records r ON r.rowid = h.record "
        "WHERE r.id = ? AND h.name = ? AND h.target = ?",
        (record_id, name, target),
    ).fetchone()
    db.conn.close()
    return None if row is None else json.loads(row[0])


@pytest.mark.cli_smoke  # the bad lines' stderr, as a real process prints it
def test_csv_applies_the_good_lines_and_names_the_bad(ragreview, demo_copy, tmp_path) -> None:
    assert ragreview("import", demo_copy).exit_code == 0
    changes = tmp_path / "changes.csv"
    changes.write_text(
        "record_id,name,target,value,reason\n"
        "covid-1,supported,a,false,checked by hand\n"
        "covid-1,supported,zz,true,\n"
        "nope,supported,a,true,\n"
        "covid-1,supported,b,maybe,\n"
        "covid-1,bogus,a,true,\n"
    )
    proc = ragreview("label", demo_copy, "--from", changes, "--reviewer", "ann")
    assert proc.exit_code == 1
    assert "1 labels changed, 0 unchanged, 4 bad lines" in proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert [e.split(": ", 3)[1:3] for e in errors] == [
        [f"{changes}:3", "target"],
        [f"{changes}:4", "record_id"],
        [f"{changes}:5", "value"],
        [f"{changes}:6", "name"],
    ]
    assert "Traceback" not in proc.stderr
    db_path = tmp_path / "demo.ragreview.db"
    assert _human(db_path, "covid-1", "supported", "a") is False
    log = ragreview("log", demo_copy).stdout
    assert "checked by hand" in log


def test_jsonl_values_are_json_and_null_reverts(ragreview, demo_copy, tmp_path) -> None:
    assert ragreview("import", demo_copy).exit_code == 0
    changes = tmp_path / "changes.jsonl"
    lines = [
        {"record_id": "covid-1", "name": "supported", "target": "a", "value": False},
        {"record_id": "covid-1", "name": "supported", "target": "b", "value": False},
        {"record_id": "covid-1", "name": "supported", "target": "a", "value": None},
        {"record_id": "covid-1", "name": "supported", "target": "b"},
    ]
    changes.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    proc = ragreview("label", demo_copy, "--from", changes)
    assert proc.exit_code == 1
    assert "3 labels changed, 0 unchanged, 2 bad lines" in proc.stdout
    assert f"{changes}:4: value: missing" in proc.stderr
    assert f"{changes}:5: not JSON" in proc.stderr
    db_path = tmp_path / "demo.ragreview.db"
    assert _human(db_path, "covid-1", "supported", "a") is None  # reverted to the judge's
    assert _human(db_path, "covid-1", "supported", "b") is False


def test_all_good_exits_0_and_arguments_are_exclusive(ragreview, demo_copy, tmp_path) -> None:
    assert ragreview("import", demo_copy).exit_code == 0
    changes = tmp_path / "ok.csv"
    changes.write_text("record_id,name,target,value\ncovid-1,supported,a,false\n")
    proc = ragreview("label", demo_copy, "--from", changes)
    assert proc.exit_code == 0, proc.stderr
    assert "1 labels changed" in proc.stdout
    both = ragreview("label", demo_copy, "covid-1", "--from", changes)
    assert both.exit_code == 2 and "--from FILE takes no" in both.stderr
    neither = ragreview("label", demo_copy, "covid-1")
    assert neither.exit_code == 2 and "or --from FILE" in neither.stderr
    header = tmp_path / "bad.csv"
    header.write_text("id,name,target,value\n")
    proc = ragreview("label", demo_copy, "--from", header)
    assert proc.exit_code == 1 and f"{header}:1: record_id:" in proc.stderr
