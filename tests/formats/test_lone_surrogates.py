"""A string holding a lone surrogate written as a JSON escape (``"\\ud800"``, half of a
UTF-16 pair) is the error of the record that holds it, as a byte that is not UTF-8 is
(test_not_utf8.py): orjson refuses such a line, json's fallback parse made a str of it,
and storing that str raised UnicodeEncodeError out of the import (an MT-RAG line with
NaN cells, a RAGChecker document). The error names file, line and field; the other
records import; never a traceback. An escaped pair (an emoji) is one character and
imports. Real fixtures (copies of /work/shared/fixtures in fixtures/)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ragreview.formats.json_limits import has_surrogate_escape, lone_surrogate

from .helpers import FIXTURES, run

MTRAG = FIXTURES / "mtrag" / "responses-10.jsonl"
RAGCHECKER = FIXTURES / "ragchecker" / "checking_outputs.json"


def _import(path: Path, db: Path) -> tuple[int, str, int]:
    """(exit code, output, records imported)."""
    result = run("import", path, "--db", db)
    output = result.stderr + result.stdout
    assert "Traceback" not in output, output
    found = re.search(r"dataset '[^']*': (\d+) new", output)
    return result.exit_code, output, int(found[1]) if found else 0


def _errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def test_the_walk_finds_a_lone_half_and_passes_a_pair() -> None:
    text = '{"a": {"b": ["ok", "x\\ud800y"]}, "c": "\\ud83d\\ude00"}'
    assert has_surrogate_escape(text)
    assert lone_surrogate(json.loads(text)) == (
        "a.b[1]",
        "lone surrogate \\ud800 at character 2 (not Unicode text)",
    )
    pair = '{"c": "\\ud83d\\ude00"}'
    assert has_surrogate_escape(pair) and lone_surrogate(json.loads(pair)) is None
    key = json.loads('{"k\\udfff": 1}')
    assert lone_surrogate(key) == (
        "k\\udfff",
        "lone surrogate \\udfff at character 2 (not Unicode text)",
    )
    # (an escaped backslash before the letters: the search may pass it, the walk does not)
    assert lone_surrogate(json.loads('{"a": "\\\\ud800"}')) is None


def test_an_mtrag_line_with_nan_cells_loses_only_its_record(tmp_path: Path) -> None:
    lines = [line for line in MTRAG.read_text().splitlines() if line.strip()]
    assert "NaN" in lines[1]  # (pandas' missing cells: the line json parses)
    row = json.loads(lines[1])
    row["predictions"][0]["text"] += " \ud800 tail"
    path = tmp_path / "responses.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(row), *lines[2:]]) + "\n")
    code, output, imported = _import(path, tmp_path / "x.db")
    assert code == 1 and imported == len(lines) - 1, output
    (error,) = _errors(output)
    assert re.fullmatch(
        rf"error: {re.escape(str(path))}:2: predictions\[0\]\.text: "
        r"lone surrogate \\ud800 at character \d+ \(not Unicode text\)",
        error,
    ), error


def test_an_emoji_written_as_an_escaped_pair_imports(tmp_path: Path) -> None:
    lines = [line for line in MTRAG.read_text().splitlines() if line.strip()]
    row = json.loads(lines[1])
    row["predictions"][0]["text"] += " \U0001f600"
    path = tmp_path / "responses.jsonl"
    path.write_text(json.dumps(row) + "\n")  # (ensure_ascii: "\ud83d\ude00")
    assert "\\ud83d\\ude00" in path.read_text()
    code, output, imported = _import(path, tmp_path / "x.db")
    assert code == 0 and imported == 1, output


def test_a_ragchecker_document_loses_only_the_result(tmp_path: Path) -> None:
    total = len(json.loads(RAGCHECKER.read_text())["results"])
    text = json.dumps(json.loads(RAGCHECKER.read_text()), indent=2)
    at = text.index('"response": "') + len('"response": "')
    path = tmp_path / "checking_outputs.json"
    path.write_text(text[:at] + "\\ud800 " + text[at:])
    code, output, imported = _import(path, tmp_path / "x.db")
    assert code == 1 and imported == total - 1, output
    (error,) = _errors(output)
    line = text.count("\n", 0, at) + 1
    assert re.fullmatch(
        rf"error: {re.escape(str(path))}:{line}: results\[0\]\.\S+: "
        r"lone surrogate \\ud800 at character 1 \(not Unicode text\)",
        error,
    ), error
