"""``Dataset.export`` is the CLI's export (services.export.export) with its guards: the
review DB, its WAL and the input file are never written over, with or without
``force=True``; afterwards the DB answers ``metrics`` exactly as before."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import ragreview
from ragreview.core.errors import RagreviewError
from tests.conftest import REPO_ROOT
from tests.formats.helpers import run

DEMO = REPO_ROOT / "fixtures" / "demo.jsonl"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, path)
    return path


def test_the_db_its_wal_and_the_input_are_refused(demo: Path) -> None:
    ds = ragreview.open(demo)
    ds.label("covid-1", "relevant", "0a", False, reviewer="alice")
    db_path = ds.path
    wal = Path(f"{db_path}-wal")
    assert wal.exists()  # the API's connection is open: the WAL is live
    before = run("metrics", db_path).output, run("metrics", db_path, "--json").output
    text, db_bytes = demo.read_bytes(), db_path.read_bytes()
    attempts = [
        (db_path, "ragreview"),  # the bug seen: the review DB replaced by JSONL
        (wal, "source"),
        (demo, "source"),  # the bug seen: the input overwritten
        (demo.parent / "." / demo.name, "csv"),
    ]
    for out, fmt in attempts:
        for force in (False, True):
            with pytest.raises(RagreviewError) as refused:
                ds.export(out, format=fmt, force=force)
            message = str(refused.value)
            assert message.startswith(f"{out}: refusing to write over ")
            assert message.endswith("(the review database or an input); choose another output file")
            assert "\n" not in message
    assert demo.read_bytes() == text and db_path.read_bytes() == db_bytes
    assert sorted(p.name for p in demo.parent.iterdir() if p.name.startswith(".")) == []
    ds.close()
    after = run("metrics", db_path).output, run("metrics", db_path, "--json").output
    assert after == before
    assert run("log", db_path, "--json").output.count("alice") == 1


def test_opened_from_the_db_the_input_is_still_refused(demo: Path) -> None:
    ragreview.open(demo).close()
    ds = ragreview.open(demo.with_name("demo.ragreview.db"))
    with pytest.raises(RagreviewError, match="refusing to write over"):
        ds.export(demo, force=True)
    os.link(demo, demo.with_name("hard.jsonl"))  # the same file under another name
    with pytest.raises(RagreviewError, match="refusing to write over"):
        ds.export(demo.with_name("hard.jsonl"), force=True)
    ds.close()


def test_an_existing_file_needs_force(demo: Path, tmp_path: Path) -> None:
    ds = ragreview.open(demo)
    out = tmp_path / "gold.jsonl"
    out.write_text("keep me\n")
    with pytest.raises(RagreviewError) as refused:
        ds.export(out)
    assert str(refused.value) == f"{out} already exists: give force=True to replace it"
    assert out.read_text() == "keep me\n"
    assert ds.export(out, force=True) == 5
    assert len(out.read_text().splitlines()) == 5
    assert ds.export(tmp_path / "dis.jsonl", format="disagreements") == 0
    ds.close()
