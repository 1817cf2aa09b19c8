"""Property: every override reaches ``export --as source``, or the export refuses.

For every fixture of every format, hypothesis picks records and overrides every label
name the record's family supports (core/labels.py) on drawn targets with drawn values;
the dataset is exported in its source format and the file re-imported into a fresh DB.
Either the effective labels come back equal, or the export refused with the one message
naming the labels and ``--as ragreview``, wrote nothing, named only labels that format
cannot hold (docs/formats.md), and with ``--allow-loss`` every other label comes back.

"Equal": every label the reviewed DB defines comes back with the same value (an absent
label is the catalogue default, so an absent ``relevant`` is false). A label the
reviewed DB leaves undefined may come back defined: some source fields are complete
lists (RGB's ``label`` has a bit for every answer part, RAGBench's unsupported-key list
makes every other response sentence supported; see docs/formats.md).
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragreview.core.families import task_family
from ragreview.core.labels import CATALOGUE, SUPPORT_TOKENS, LabelSpec, effective
from ragreview.core.record import Record
from ragreview.core.rgb_rules import refusal
from ragreview.store import history, open_database
from ragreview.store import records as store_records

from .helpers import FIXTURES, SHARED_RGB, map_args, run

FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl"))
SHARED = sorted(SHARED_RGB.glob("*.json")) if SHARED_RGB.is_dir() else []
FAMILY_LABELS: dict[str, list[LabelSpec]] = {}
for _spec in CATALOGUE.values():
    FAMILY_LABELS.setdefault(_spec.family, []).append(_spec)

REFUSAL = "cannot hold these reviewed labels"


NAMED = re.compile(r"(\w+) \(\d+ records?:")


def may_refuse(record: Record, source: Path) -> set[str]:
    """The labels the record's source format may be unable to hold (docs/formats.md)."""
    if map_args(source):  # a user's file holds the labels its map names (label.<name>)
        with map_args(source)[1].open("rb") as fh:  # type: ignore[union-attr]
            held = {t[len("label.") :] for t in tomllib.load(fh)["map"] if t.startswith("label.")}
        return set(CATALOGUE) - held
    family = getattr(task_family(record.task), "name", None)
    if family == "rgb":  # part bits under a rejection (label [-1]); a judge script's
        # verdict only where that script judges (its `evaluation` names one verdict)
        other = "not_addressed" if record.task == "rgb-counterfactual" else "identified"
        return {"part_matched", other}
    if family == "mtrag":
        return {"rb_llm_rating"}  # more digits than rating / 10 gives back
    if family == "ragas":  # an annotation sample holds only its verdict; a row no verdict
        return (
            {"statement", "attributed", "context_useful"}
            if "ragas_metric" in record.data
            else {"verdict"}
        )
    return set()


def _copy_db(source: Path, dest: Path) -> None:
    """A consistent copy of a DB in WAL mode (the file alone may miss pages)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(dest)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], tuple[Path, list]]:
    """Each fixture imported once: (template DB, [(rowid, record)] of labellable records)."""
    cache: dict[Path, tuple[Path, list]] = {}

    def get(source: Path) -> tuple[Path, list]:
        if source not in cache:
            folder = tmp_path_factory.mktemp(source.stem[:40])
            path = folder / source.name
            shutil.copy(source, path)
            db = folder / "template.db"
            result = run("import", path, "--db", db, "--strict", *map_args(source))
            assert result.exit_code == 0, result.output
            database = open_database(db)
            found = [
                (item.rowid, item.record)
                for item in store_records.iterate(database)
                if _labels_for(item.record)
            ]
            database.conn.close()
            cache[source] = (db, found)
        return cache[source]

    return get


def _labels_for(record: Record) -> list[LabelSpec]:
    """The family's labels that have a target on ``record`` and that it can take (the
    store refuses RGB's judgements of the output on a record without a prediction)."""
    family = getattr(task_family(record.task), "name", None)
    return [
        s
        for s in FAMILY_LABELS.get(family or "", [])
        if record.targets(s.target) and refusal(record, s.name) is None
    ]


def _values(spec: LabelSpec, record: Record) -> st.SearchStrategy[Any]:
    if spec.kind == "bool":
        return st.booleans()
    if spec.kind == "choice":
        return st.sampled_from(spec.choices)
    if spec.kind == "keys":
        keys = sorted(set(record.targets("doc"))) + sorted(SUPPORT_TOKENS)
        return st.lists(st.sampled_from(keys), max_size=3, unique=True)
    assert spec.kind == "rating"
    return st.one_of(
        st.integers(1, 10), st.sampled_from([2.5, 7.25]), st.floats(1, 10, allow_nan=False)
    )


@st.composite
def overrides(
    draw: st.DrawFn, records: list, source: Path
) -> tuple[list[tuple[int, str, str, Any]], set]:
    """((rowid, label, target, value) for every label of one to three records, in a
    drawn order; the labels their formats may refuse)."""
    out, refusable = [], set()
    picks = draw(st.lists(st.integers(0, len(records) - 1), min_size=1, max_size=3, unique=True))
    for rowid, record in (records[i] for i in picks):
        refusable |= may_refuse(record, source)
        for spec in draw(st.permutations(_labels_for(record))):
            targets = record.targets(spec.target)
            for target in draw(st.lists(st.sampled_from(targets), min_size=1, max_size=2)):
                out.append((rowid, spec.name, target, draw(_values(spec, record))))
    return out, refusable


def _effective_by_id(db_path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    database = open_database(db_path)
    try:
        return {i.id: effective(i.judge, i.human) for i in store_records.iterate(database)}
    finally:
        database.conn.close()


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def assert_held(before: dict[str, Any], after: dict[str, Any], skip: set[str]) -> None:
    """Every label ``before`` defines comes back in ``after`` (labels in ``skip`` aside)."""
    assert set(before) == set(after)
    for rid, want in before.items():
        got = after[rid]
        for name in (set(want) | set(got)) - skip:
            default = CATALOGUE[name].default
            for target in set(want.get(name, {})) | set(got.get(name, {})):
                w = want.get(name, {}).get(target, default)
                g = got.get(name, {}).get(target, default)
                if w is not None:
                    assert _same(w, g), f"record {rid!r}: {name} {target}: {w!r} came back {g!r}"


def check(source: Path, imported: Callable, data: st.DataObject) -> None:
    template, records = imported(source)
    if not records:
        pytest.skip(f"{source.name}: no record with a label target")
    changes, refusable = data.draw(overrides(records, source))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = folder / "review.db"
        _copy_db(template, db)
        database = open_database(db)
        for rowid, name, target, value in changes:
            history.set_label(database, rowid, name, target, value, "prop")
        database.conn.close()
        out = folder / ("exported" + source.suffix)
        result = run("export", db, "--out", out)
        refused: set[str] = set()
        if result.exit_code != 0:
            # the one refusal: names the labels, points to --as ragreview, writes nothing
            assert REFUSAL in result.output and "--as ragreview" in result.output, result.output
            assert "--allow-loss" in result.output
            assert not out.exists()
            refused = set(NAMED.findall(result.output))
            assert refused and refused <= refusable, result.output
            result = run("export", db, "--out", out, "--allow-loss")
            assert result.exit_code == 0, result.output
        again = folder / "again.db"
        result = run("import", out, "--db", again, "--strict", *map_args(source))
        assert result.exit_code == 0, result.output
        # with --allow-loss, every label the refusal did not name still comes back
        assert_held(_effective_by_id(db), _effective_by_id(again), skip=refused)


PROPERTY = settings(
    max_examples=5,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("source", FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
@PROPERTY
@given(data=st.data())
def test_every_override_reaches_the_export(
    source: Path, imported: Callable, data: st.DataObject
) -> None:
    check(source, imported, data)


@pytest.mark.skipif(not SHARED, reason="../shared/fixtures/rgb is not present")
@pytest.mark.parametrize("source", SHARED, ids=lambda p: p.name)
@PROPERTY
@given(data=st.data())
def test_every_override_reaches_the_rgb_data_file_export(
    source: Path, imported: Callable, data: st.DataObject
) -> None:
    check(source, imported, data)
