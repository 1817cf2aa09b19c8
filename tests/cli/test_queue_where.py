"""``ragreview queue --where``: the same filter as the review screen's ``/`` picks which
drawn records are listed; the draw itself (members, inclusion probabilities) is
unchanged, so the estimate still weights the whole draw."""

from __future__ import annotations

import json
import shutil

from ragreview.store import open_database

from .agreement_helpers import quick, run


def test_queue_where_lists_the_drawn_records_matching_the_filter(tmp_path, fixtures_dir):
    path = tmp_path / "clapnq_v1.json"
    shutil.copy(fixtures_dir / "inspectorraget" / "clapnq_v1.json", path)
    quick("import", str(path))
    everything = run("queue", str(path), "--n", "40", "--seed", "3", "--json")
    drawn = [json.loads(line) for line in everything.stdout.splitlines()]
    filtered = run("queue", str(path), "--where", "model=llama annotator.faithfulness!=4", "--json")
    shown = [json.loads(line) for line in filtered.stdout.splitlines()]
    db = open_database(tmp_path / "clapnq_v1.ragreview.db")
    matching = {
        rid
        for (rid,) in db.conn.execute(
            "SELECT DISTINCT r.id FROM records r JOIN reviewer_labels l ON l.record = r.rowid "
            "WHERE json_extract(r.data, '$.model') = 'llama'"
        )
    } - {
        rid
        for (rid,) in db.conn.execute(
            "SELECT r.id FROM records r JOIN reviewer_labels l ON l.record = r.rowid "
            "WHERE l.name = 'faithfulness' AND l.value = '\"4\"'"
        )
    }
    # the latest draw again, only its members that match, in draw order, same numbers
    assert shown == [row for row in drawn if row["id"] in matching]
    assert 0 < len(shown) < len(drawn)
    assert f"{len(shown)} of its {len(drawn)} match --where" in filtered.stderr


def test_queue_where_refuses_a_bad_term(tmp_path, fixtures_dir):
    path = tmp_path / "responses-10.jsonl"
    shutil.copy(fixtures_dir / "mtrag" / "responses-10.jsonl", path)
    out = run("queue", str(path), "--n", "3", "--where", "turn=", check=False)
    assert out.returncode == 2 and "--where: filter term 'turn=': no value after =" in out.stderr
    assert "Traceback" not in out.stderr
