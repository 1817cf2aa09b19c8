"""Fixtures for the judge tests: a local OpenAI-compatible server and unlabelled records."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from judge_server import JudgeServer

from ragreview.cli.session import import_file
from ragreview.store import open_database


def trace_records(n: int) -> list[dict]:
    """n unlabelled TRACe records: documents 0a-0c and 1a-1b, response a and b."""
    return [
        {
            "id": f"q{i}",
            "task": "trace",
            "question": f"Question number {i}?",
            "documents": [
                {"sentences": [["0a", f"Fact one of {i}."], ["0b", "Filler."], ["0c", "More."]]},
                {"sentences": [["1a", f"Second doc about {i}."], ["1b", "Noise."]]},
            ],
            "response": [["a", f"Answer {i} from doc zero."], ["b", "An unsupported claim."]],
        }
        for i in range(n)
    ]


# What the server's oracle answers for every record of trace_records.
EXPECTED_TRACE = {
    "relevant": {"0a": True, "1a": True},
    "utilized": {"0a": True},
    "supported": {"a": True, "b": False},
    "support_keys": {"a": ["0a"], "b": []},
}


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


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
    summary, errors = import_file(db, trace_file, "trace")
    assert summary.inserted == 8 and not errors
    yield db
    db.conn.close()


@pytest.fixture(autouse=True)
def _no_real_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
