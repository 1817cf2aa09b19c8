"""A stored record's targets read from its JSON equal the parsed record's.

``RecordTargets`` (what ``agreement`` counts label items over) reads the keys straight
from the stored canonical JSON; the reference is ``Record.targets`` of the record
``parse_record`` builds from the same JSON, on every record of a file of every family,
for every target kind.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragreview.core import deepeval_items
from ragreview.core.labels import CATALOGUE
from ragreview.core.record import CELL_KINDS, parse_record
from ragreview.core.record_targets import RecordTargets
from ragreview.store import open_database
from ragreview.store.records import loads

from ..formats.helpers import FAMILY_SOURCES, map_args, run

KINDS = sorted(
    {spec.target for spec in CATALOGUE.values()}
    | {"doc", "response", "record", "part", "fact", "statement", "reference_statement"}
    | {"context", *deepeval_items.KINDS, *CELL_KINDS}
)


@pytest.mark.parametrize("source", FAMILY_SOURCES, ids=lambda p: p.name)
def test_targets_from_the_stored_json_equal_the_parsed_records(
    source: Path, tmp_path: Path
) -> None:
    db_path = tmp_path / "t.db"
    assert run("import", source, "--db", db_path, *map_args(source)).exit_code == 0
    db = open_database(db_path)
    checked = 0
    for (text,) in db.conn.execute("SELECT data FROM records ORDER BY position"):
        record, lean = parse_record(loads(text)), RecordTargets(loads(text))
        assert lean.task == record.task
        for kind in KINDS:
            assert lean.targets(kind) == record.targets(kind), (record.id, kind)
            checked += bool(record.targets(kind))
    db.conn.close()
    assert checked


def test_an_unknown_kind_is_refused_as_by_the_record() -> None:
    with pytest.raises(ValueError, match="unknown target kind"):
        RecordTargets({"id": "x"}).targets("nope")
