"""The bulk path's metric rows and running sums of new records (store.metric_import_writes):
a batch whose records share their metric names is summed per column and bound per
record; the sums must be the very floats a running total per value gives, and the rows
the same as written row by row."""

from __future__ import annotations

import random
import sqlite3

from ragreview.store import bulk
from ragreview.store.metric_import_writes import _insert_layer, _Layered
from ragreview.store.metric_writes import COUNT


def _running(records: list[tuple[int, dict]]) -> dict[str, list]:
    """The sums as a running total per value, in record order (the reference)."""
    out: dict[str, list] = {}
    for _, values in records:
        for name, value in values.items():
            s = out.setdefault(name, [0, 0.0, 0.0, 0])
            if value is None:
                s[3] += 1
            else:
                s[0] += 1
                s[1] += value
                s[2] += value * value
    return out


def _batch(rng: random.Random, names: tuple[str, ...], n: int, start: int = 1) -> list:
    records = []
    for rowid in range(start, start + n):
        values = [
            None if rng.random() < 0.2 else rng.choice([rng.random() * 1e3, 1, 0.1, -0.0])
            for _ in names
        ]
        records.append((rowid, dict(zip(names, values, strict=True))))
    return records


def test_column_sums_are_the_running_totals_bit_for_bit() -> None:
    rng = random.Random(27)
    names = ("trace.relevance", "trace.utilization", "trace._hall", "x.y")
    for n in (1, 2, 7, 1000):
        records = _batch(rng, names, n)
        layered = _Layered(records)
        assert layered.names == names
        got = layered.sums()
        want = _running(records)
        assert list(got) == list(want)
        for name in names:  # (repr: -0.0 and 0.0 are equal but not the same float)
            assert [repr(v) for v in got[name]] == [repr(v) for v in want[name]]


def test_records_with_other_names_are_summed_row_by_row() -> None:
    rng = random.Random(28)
    records = _batch(rng, ("a.b", "c.d"), 5) + _batch(rng, ("c.d",), 3, start=6)
    records += _batch(rng, ("a.b", "c.d"), 4, start=9)
    layered = _Layered(records)
    assert layered.names is None
    assert layered.sums() == _running(records)


def _table(conn: sqlite3.Connection) -> list[tuple]:
    return conn.execute("SELECT * FROM record_metrics ORDER BY record, layer, name").fetchall()


def _connection() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE TABLE record_metrics (record INTEGER NOT NULL, layer TEXT NOT NULL, "
        "name TEXT NOT NULL, value REAL, PRIMARY KEY (record, layer, name)) WITHOUT ROWID"
    )
    return conn


def test_rows_bound_per_record_are_the_rows_written_one_by_one() -> None:
    rng = random.Random(29)
    # more records than one statement takes, and a remainder; a name needing quoting
    same = _batch(rng, ("trace.relevance", "it's.odd", "z"), 137)
    mixed = _batch(rng, ("a.b",), 3) + _batch(rng, ("a.b", "c.d"), 3, start=4)
    empty: list = [(rowid, {}) for rowid in range(1, 6)]
    for records in (same, mixed, empty):
        for layer, count in (("judge", True), ("stored", False)):
            conn = _connection()
            _insert_layer(conn, layer, _Layered(records), count)
            reference = _connection()
            flat: list = []
            for rowid, values in records:
                if count:
                    flat += (rowid, COUNT, 1.0)
                for name, value in values.items():
                    flat += (rowid, name, value)
            bulk.insert_flat(
                reference,
                "record_metrics",
                ("record", "name", "value"),
                flat,
                fixed={"layer": f"'{layer}'"},
            )
            assert _table(conn) == _table(reference)
