"""Rows stored as parquet (RAGBench's HF files, any row format) and as a
``datasets.save_to_disk`` directory import exactly as the same rows in JSON Lines;
``export --as parquet`` re-imports equal."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragreview.store import open_database
from tests.conftest import subprocess_env

from .helpers import FIXTURES, HANDWRITTEN, run

RAGBENCH = HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl"


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def table_of(rows: list[dict]) -> pa.Table:
    """Every field of every row as a column (``from_pylist`` keeps the first row's)."""
    names = list(dict.fromkeys(k for row in rows for k in row))
    return pa.table({name: [row.get(name) for row in rows] for name in names})


def snapshot(path: Path) -> dict:
    """Records, both label layers and per-record metrics of an imported input."""
    db = open_database(
        path.with_name(path.stem + ".ragreview.db") if path.suffix != ".db" else path
    )
    records, judge, human = {}, {}, {}
    for rowid, rid, data in db.conn.execute(
        "SELECT rowid, id, data FROM records ORDER BY position"
    ):
        records[rid] = json.loads(data)
        for table, into in (("judge_labels", judge), ("human_labels", human)):
            for name, target, value in db.conn.execute(
                f"SELECT name, target, value FROM {table} WHERE record = ?", (rowid,)
            ):
                into.setdefault(rid, {}).setdefault(name, {})[target] = json.loads(value)
    result = run("metrics", path, "--per-record", "--json")
    assert result.exit_code == 0, result.output
    metrics = {}
    for line in result.stdout.splitlines():
        obj = json.loads(line)
        metrics[obj["id"]] = (obj["judge"], obj["effective"])
    return {"records": records, "judge": judge, "human": human, "metrics": metrics}


def strip_scores(records: dict) -> dict:
    return {rid: {k: v for k, v in data.items() if k != "scores"} for rid, data in records.items()}


def imported(path: Path) -> dict:
    result = run("import", path, "--strict")
    assert result.exit_code == 0, result.output
    return snapshot(path)


def test_ragbench_parquet_imports_as_the_jsonl(tmp_path) -> None:
    jsonl = tmp_path / "rows.jsonl"
    shutil.copy(RAGBENCH, jsonl)
    parquet = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(table_of(rows_of(RAGBENCH)), parquet, row_group_size=2)
    want = imported(jsonl)
    assert len(want["records"]) == 4
    assert imported(parquet) == want


def test_a_save_to_disk_directory_imports_as_the_jsonl(tmp_path) -> None:
    jsonl = tmp_path / "rows.jsonl"
    shutil.copy(RAGBENCH, jsonl)
    saved = tmp_path / "covidqa_test"
    saved.mkdir()
    table = table_of(rows_of(RAGBENCH))
    with pa.OSFile(str(saved / "data-00000-of-00001.arrow"), "wb") as sink:
        with pa.ipc.new_stream(sink, table.schema) as writer:
            for batch in table.to_batches(max_chunksize=3):
                writer.write_batch(batch)
    (saved / "state.json").write_text(
        json.dumps({"_data_files": [{"filename": "data-00000-of-00001.arrow"}], "_split": "test"})
    )
    (saved / "dataset_info.json").write_text("{}")
    assert imported(saved) == imported(jsonl)
    # a DatasetDict: one split at a time
    parent = tmp_path / "ragbench_dict"
    parent.mkdir()
    (parent / "dataset_dict.json").write_text(json.dumps({"splits": ["train", "test"]}))
    result = run("import", parent)
    assert result.exit_code == 1 and "open one split's directory (train, test)" in result.output


@pytest.mark.parametrize(
    "source",
    [
        RAGBENCH,
        FIXTURES / "mtrag" / "responses-10.jsonl",  # NaN, lists of mixed shapes
        FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl",  # null annotations
        FIXTURES / "demo.jsonl",  # ragreview's own rows
    ],
    ids=lambda p: p.name,
)
def test_export_as_parquet_reimports_equal(source, tmp_path) -> None:
    jsonl = tmp_path / f"in{source.suffix}"
    shutil.copy(source, jsonl)
    before = imported(jsonl)
    rid = next(iter(before["records"]))
    record = before["records"][rid]
    if record.get("documents"):  # one override, so the reviewed labels are exported
        key = record["documents"][0]["sentences"][0][0]
        current = before["judge"].get(rid, {}).get("relevant", {}).get(key, False)
        assert run("label", jsonl, rid, "relevant", key, json.dumps(not current)).exit_code == 0
        before = snapshot(jsonl)
    out = tmp_path / "out.parquet"
    result = run("export", jsonl, "--as", "parquet", "--out", out)
    assert result.exit_code == 0, result.output
    after = imported(out)
    if source.name == "demo.jsonl" or not record.get("documents"):
        assert after["records"] == before["records"]
    else:  # the corrected row's stored scores and label-list counts follow the override
        assert strip_scores(after["records"]) == strip_scores(before["records"])
        assert after["records"][rid]["scores"] != before["records"][rid]["scores"]
    effective = {rid: m[1] for rid, m in before["metrics"].items()}
    if source.name == "demo.jsonl":  # ragreview rows carry both layers as they are
        assert after["judge"] == before["judge"] and after["human"] == before["human"]
        assert after["metrics"] == before["metrics"]
    else:  # source rows carry the reviewed labels as the file's own
        assert {rid: m[0] for rid, m in after["metrics"].items()} == effective


def test_export_as_parquet_of_a_whole_file_format_holds_ragreview_rows(tmp_path) -> None:
    path = tmp_path / "safe.json"
    shutil.copy(HANDWRITTEN / "safe" / "2024-04-01-12-00-00-SAFE.json", path)
    before = imported(path)
    out = tmp_path / "safe_rows.parquet"
    assert run("export", path, "--as", "parquet", "--out", out).exit_code == 0
    assert imported(out)["records"] == before["records"]


def test_a_missing_pyarrow_is_one_clear_line(tmp_path) -> None:
    parquet = tmp_path / "rows.parquet"
    pq.write_table(table_of(rows_of(RAGBENCH)), parquet)
    code = "import sys; sys.modules['pyarrow'] = None; from ragreview.cli import cli; cli()"
    proc = subprocess.run(
        [sys.executable, "-c", code, "import", str(parquet)],
        capture_output=True,
        text=True,
        env=subprocess_env(tmp_path),
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        f"Error: {parquet}: parquet needs pyarrow: pip install 'ragreview[parquet]'"
    )
    assert not (tmp_path / "rows.ragreview.db").exists()


def test_reading_json_lines_never_loads_pyarrow(tmp_path) -> None:
    code = (
        "import sys; from pathlib import Path; from ragreview import formats; "
        f"fmt, items = formats.read(Path({str(RAGBENCH)!r})); list(items); "
        "print('pyarrow' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(tmp_path)
    )
    assert proc.stdout.strip() == "False", proc.stderr


def test_rows_give_what_their_json_text_parses_to(tmp_path) -> None:
    """Rows handed on as Arrow gives them (no JSON round trip) must equal the parse of
    their own text: NaN and infinities (written as null), maps (pairs), nested floats."""
    from ragreview.formats import parquet

    path = tmp_path / "rows.parquet"
    batches = [
        pa.table({"id": ["a", "b"], "xs": [[["k", "v"]], None], "n": [1, 2**40]}),
        pa.table({"id": ["c", "d"], "xs": [[["k", "w"]], []], "n": [3, 4]}),
    ]
    with pq.ParquetWriter(str(path), batches[0].schema) as writer:
        for table in batches:
            writer.write_table(table)
    special = tmp_path / "special.parquet"
    pq.write_table(
        pa.table(
            {
                "f": [1.5, float("nan"), float("inf")],
                "nested": [[0.5], [float("nan")], None],
                "m": pa.array([[("a", 1)], [], None], type=pa.map_(pa.string(), pa.int64())),
            }
        ),
        str(special),
    )
    for file in (path, special):
        got = list(parquet.rows(file))
        assert [n for n, _, _, _ in got] == list(range(1, len(got) + 1))
        for _n, line, value, raw in got:
            assert raw == line.encode()
            assert value == json.loads(line)
            assert json.dumps(value) == json.dumps(json.loads(line))  # (lists, not tuples)
    assert [v for _, _, v, _ in parquet.rows(special)][1] == {"f": None, "nested": [None], "m": []}


def test_reading_stops_cleanly_after_the_first_row(tmp_path) -> None:
    """Sniffing reads one row: the batch reader thread must not outlive it."""
    import threading

    from ragreview.formats import parquet

    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"id": [str(i) for i in range(5000)]}), str(path), row_group_size=500)
    before = threading.active_count()
    assert parquet.first_row(path) == '{"id":"0"}'
    assert threading.active_count() == before
