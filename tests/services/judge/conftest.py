"""Fixtures for the judge tests: a local OpenAI-compatible server and unlabelled records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragreview.store import open_database

from .helpers import import_into, trace_records, write_jsonl
from .judge_server import JudgeServer


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    with JudgeServer() as server:
        yield server


@pytest.fixture
def trace_file(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "trace.jsonl", trace_records(8))


@pytest.fixture
def trace_db(trace_file: Path):
    db = open_database(trace_file.with_suffix(".ragreview.db"))
    summary, errors = import_into(db, trace_file, "trace")
    assert summary.inserted == 8 and not errors
    yield db
    db.conn.close()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory) -> None:
    """No real key or endpoint leaks in; children get a HOME inside tmp."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
