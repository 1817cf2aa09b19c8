"""A file large enough for the worker process (services.import_pipeline) with hostile
lines in it: each is its record's located error, every other record imports."""

from __future__ import annotations

import json
from pathlib import Path

from ragreview.services import import_pipeline
from ragreview.store import open_database
from ragreview.store import records as store_records
from tests.formats.helpers import HANDWRITTEN, run

RGB = HANDWRITTEN / "rgb" / "prediction_en_ModelX_temp0.7_noise0.4_passage5_correct0.0.json"
PAD = 2**20  # bytes of padding per row: few rows, past the worker's threshold quickly


def test_hostile_lines_in_a_file_the_worker_reads(tmp_path: Path) -> None:
    row = json.loads(RGB.read_text(encoding="utf-8").splitlines()[0])
    without_docs = {k: v for k, v in row.items() if k != "docs"}  # (then the pools are read)
    rows = import_pipeline.PARALLEL_MIN_BYTES // PAD + 2
    lines = [json.dumps({**row, "id": i, "pad": "x" * PAD}) for i in range(rows)]
    bad = {
        3: "[" * 10_000 + "]" * 10_000,  # nested 10,000 deep
        7: json.dumps({**row, "id": 0}).replace('"id": 0', '"id": ' + "9" * 5000),
        11: json.dumps({**without_docs, "positive": 1.5}),
        13: json.dumps({**row, "id": 1000}).replace("1000", "NaN", 1),
    }
    for at in sorted(bad):
        lines.insert(at - 1, bad[at])  # (line numbers are 1-based)
    path = tmp_path / "prediction_en_big.json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert import_pipeline.worth_it(path)

    result = run("import", path, "--db", tmp_path / "big.db")
    assert result.exit_code == 1 and "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert [e.split(": ", 2)[1] for e in errors] == [f"{path}:{n}" for n in sorted(bad)]
    assert "nested more than 1024 levels deep" in errors[0]
    assert "id: integer of more than 4300 digits" in errors[1]
    assert "positive: expected a list, got a number" in errors[2]
    assert "id: not a finite number" in errors[3]
    assert f"{rows} new" in result.stderr
    db = open_database(tmp_path / "big.db")
    assert sorted(int(r.id) for r in store_records.iterate(db)) == list(range(rows))
    db.conn.close()
