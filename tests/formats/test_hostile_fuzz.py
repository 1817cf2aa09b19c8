"""Hostile input, fuzzed: every fixture of every format, corrupted the ways an attacker
would (truncated lines, deep nesting, huge integers, wrong types, NaN, repeated ids,
garbage bytes, byte order marks, bytes that are not UTF-8), imported through the CLI.

For each corrupted file: no traceback, exit 0 or 1, every error and warning names
file:line, and every record the corruption did not touch is imported. Seeded
(derandomized) and bounded: the whole module runs in well under a minute.
"""

from __future__ import annotations

import json
import re
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragreview.formats import native

from .helpers import FIXTURES, SHARED_RGB, map_args, run

LINES_KEPT = 4  # records taken from each JSON Lines fixture (enough to corrupt, and fast)
TASKS_KEPT = 3  # tasks taken from an InspectorRAGet experiment: 12 evaluations of 4 models
DEEP = "[" * 3000 + "]" * 3000  # past the parser's limit
DEEPISH = "[" * 600 + "]" * 600  # parses, but too deep to store or write back as it is
HUGE = "9" * 5000
BAD_VALUES = [1.5, -1, "x", [], {}, True, None, [1, "a"], {"a": [1]}]
ID_FIELDS = ("id", "task_id", "topic", "sample_id")
_LOCATED = re.compile(r"^(error|warning|Error): (?P<path>.+?):(?P<line>\d+): ")


def _fixtures() -> list[Path]:
    found = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".json", ".jsonl"))
    if SHARED_RGB.is_dir():  # the real RGB files live outside the repo: used when present
        found += sorted(SHARED_RGB.glob("*.json"))
    return found


FIXTURE_FILES = _fixtures()


def _is_document(text: str) -> bool:
    """A whole-file JSON document, not JSON Lines: pretty-printed, or one line with no
    newline at all (DeepEval writes its test runs so; a JSON Lines file ends its line)."""
    try:
        json.loads(text)
    except ValueError:
        return False
    return "\n" in text.strip() or "\n" not in text


@cache
def _original(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if _is_document(text):
        return _cut_experiment(text)
    return "".join(line + "\n" for line in text.splitlines()[:LINES_KEPT])


def _cut_experiment(text: str) -> str:
    """An InspectorRAGet experiment (3.4 MB, 400 evaluations) cut down to the evaluations
    of its first few tasks, with those tasks and the documents they cite, and every
    model and metric kept: the same real records, but each corrupted import reads 12
    evaluations instead of 400 (seconds each). Other documents are small: kept whole."""
    doc = json.loads(text)
    if not isinstance(doc, dict) or "tasks" not in doc:
        return text
    key = next((k for k in ("evaluations", "results") if k in doc), None)
    if key is None:
        return text
    kept = list(dict.fromkeys(ev["task_id"] for ev in doc[key]))[:TASKS_KEPT]
    doc[key] = [ev for ev in doc[key] if ev["task_id"] in kept]
    doc["tasks"] = [t for t in doc["tasks"] if t["task_id"] in kept]
    cited = {c.get("document_id") for t in doc["tasks"] for c in t.get("contexts") or []}
    doc["documents"] = [d for d in doc.get("documents") or [] if d["document_id"] in cited]
    return json.dumps(doc, ensure_ascii=False, indent=2)


def _import(
    text: bytes | str, name: str, fixture: Path | None = None
) -> tuple[int, list[str], int, str]:
    """Import ``text`` as a file called ``name`` into a fresh DB (through the field map
    of ``fixture`` when it has one): (exit code, stderr lines, records imported, the
    file's path)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        if isinstance(text, str):
            text = text.encode("utf-8")
        path.write_bytes(text)
        extra = map_args(fixture) if fixture is not None else []
        result = run("import", path, "--db", Path(tmp) / "x.db", *extra)
        output = result.stderr + result.stdout
        assert "Traceback" not in output, output
        assert result.exit_code in (0, 1), output
        imported = re.search(r"dataset '[^']*': (\d+) new", output)
        return result.exit_code, output.splitlines(), int(imported[1]) if imported else 0, str(path)


@cache
def _baseline(path: Path) -> int:
    """How many records the uncorrupted (cut down) fixture imports, cleanly."""
    code, lines, count, _ = _import(_original(path), path.name, path)
    assert code == 0 and count > 0, lines
    return count


def _check_located(lines: list[str], path: str) -> list[tuple[str, int, str]]:
    """Every error and warning names this file and a line: (kind, line, message)."""
    found = []
    for line in lines:
        if not line.lower().startswith(("error:", "warning:")):
            continue
        if re.fullmatch(r"Error: \d+ invalid records? (were|was) skipped", line):
            continue
        if line.startswith("… and "):
            continue
        match = _LOCATED.match(line)
        assert match is not None and match["path"] == path, (line, lines)
        found.append((match[1].lower(), int(match["line"]), line))
    return found


# -- corrupting one value ------------------------------------------------------------


def _paths(value: Any, prefix: tuple = (), depth: int = 0) -> list[tuple]:
    """Every path to a value inside ``value`` (up to a few levels deep)."""
    out = [prefix] if prefix else []
    if depth >= 4:
        return out
    if isinstance(value, dict):
        for key, child in value.items():
            out += _paths(child, (*prefix, key), depth + 1)
    elif isinstance(value, list):
        for i, child in enumerate(value[:3]):
            out += _paths(child, (*prefix, i), depth + 1)
    return out


def _set(value: Any, path: tuple, new: Any) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = new


def _bad_value(data: st.DataObject) -> Any:
    kind = data.draw(st.sampled_from(["deep", "deepish", "huge", "nan", "inf", "type"]))
    return {
        "deep": "\0DEEP\0",  # placeholders: json cannot write these itself
        "deepish": "\0DEEPISH\0",
        "huge": "\0HUGE\0",
        "nan": float("nan"),
        "inf": float("-inf"),
        "type": data.draw(st.sampled_from(BAD_VALUES)),
    }[kind]


def _dumps(value: Any, indent: int | None = None) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    for name, value in (("DEEP", DEEP), ("DEEPISH", DEEPISH), ("HUGE", HUGE)):
        text = text.replace(f'"\\u0000{name}\\u0000"', value)
    return text


def _corrupt_value(record: Any, data: st.DataObject) -> None:
    paths = _paths(record)
    if not paths:
        return
    _set(record, data.draw(st.sampled_from(paths)), _bad_value(data))


# -- JSON Lines ------------------------------------------------------------------------


def _corrupt_line(line: str, data: st.DataObject) -> str | bytes:
    how = data.draw(
        st.sampled_from(["truncate", "value", "garbage", "not utf-8", "bom", "not object"])
    )
    if how == "truncate":
        return line[: data.draw(st.integers(1, max(1, len(line) - 1)))]
    if how == "garbage":
        junk = data.draw(st.binary(min_size=1, max_size=40)).replace(b"\n", b"").replace(b"\r", b"")
        at = data.draw(st.integers(0, len(line)))
        return line[:at].encode() + (junk or b"\x00") + line[at:].encode()
    if how == "not utf-8":
        at = data.draw(st.integers(0, len(line)))
        return line[:at].encode() + b"\xff\xfe" + line[at:].encode()
    if how == "bom":  # a byte order mark inside the file is not one: the line is broken
        return "\ufeff" + line
    if how == "not object":
        return _dumps(data.draw(st.sampled_from([[1, 2], "x", 3, None, DEEP_LIST])))
    row = json.loads(line)
    _corrupt_value(row, data)
    return _dumps(row)


DEEP_LIST = "\0DEEP\0"


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=[p.name[:40] for p in FIXTURE_FILES])
@settings(
    max_examples=12,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_corrupted_fixture_imports_the_rest(fixture: Path, data: st.DataObject) -> None:
    original = _original(fixture)
    total = _baseline(fixture)
    if _is_document(original):
        _check_document(fixture, original, total, data)
        return
    lines: list[str | bytes] = list(original.splitlines())
    count = data.draw(st.integers(1, min(2, len(lines))))
    touched = data.draw(st.sets(st.integers(0, len(lines) - 1), min_size=count, max_size=count))
    for i in touched:
        assert isinstance(lines[i], str)
        lines[i] = _corrupt_line(lines[i], data)  # type: ignore[arg-type]
    body = b"".join((x if isinstance(x, bytes) else x.encode()) + b"\n" for x in lines)
    if data.draw(st.booleans()):
        body = b"\xef\xbb\xbf" + body  # a leading byte order mark is allowed
    code, out, imported, path = _import(body, fixture.name, fixture)
    reported = _check_located(out, path)
    if len(touched) == len(lines):  # no good line to tell the format by: one located error
        assert code == 1 and reported, out
        return
    errors = {line for kind, line, _ in reported if kind == "error"}
    # every error is on a corrupted line; every untouched line imported
    assert errors <= {i + 1 for i in touched}, out
    assert imported >= total - len(touched), out
    assert imported + len(errors) >= total, out
    assert code == (1 if errors else 0), out


def _check_document(fixture: Path, original: str, total: int, data: st.DataObject) -> None:
    how = data.draw(st.sampled_from(["value", "value", "truncate", "garbage", "not utf-8"]))
    if how == "value":
        doc = json.loads(original)
        records = _records(doc)
        k = data.draw(st.integers(1, min(2, len(records))))
        for record in data.draw(st.permutations(records))[:k]:
            _corrupt_value(record, data)
        code, out, imported, path = _import(_dumps(doc, indent=2), fixture.name, fixture)
        reported = _check_located(out, path)
        # the corrupted records may fail; the others import
        assert imported >= total - k, out
        assert len([r for r in reported if r[0] == "error"]) <= k, out
        return
    raw = original.encode()
    at = data.draw(st.integers(1, len(raw) - 1))
    if how == "truncate":
        raw = raw[:at]
    elif how == "garbage":
        raw = raw[:at] + data.draw(st.binary(min_size=1, max_size=20)) + raw[at:]
    else:
        raw = raw[:at] + b"\xff" + raw[at:]
    code, out, imported, path = _import(raw, fixture.name, fixture)
    reported = _check_located(out, path)
    # a document that no longer parses is one located error; one that still parses
    # imports as before (bytes inside a string) or reports located errors
    assert code == 0 or reported, out


BAD_BYTE = "\0NOTUTF8\0"  # placeholder, written as the byte 0xff (json cannot)


def _strings(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a non-empty string inside ``value``."""
    if isinstance(value, str):
        return [prefix] if value else []
    if not isinstance(value, (dict, list)):
        return []
    pairs = value.items() if isinstance(value, dict) else enumerate(value)
    return [path for key, child in pairs for path in _strings(child, (*prefix, key))]


@pytest.mark.parametrize(
    "fixture",
    [f for f in FIXTURE_FILES if _is_document(_original(f))],
    ids=[f.name[:40] for f in FIXTURE_FILES if _is_document(_original(f))],
)
@settings(
    max_examples=3,  # (an InspectorRAGet experiment takes seconds to import)
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_byte_not_utf8_in_a_document_loses_only_its_record(
    fixture: Path, data: st.DataObject
) -> None:
    """A byte that is not UTF-8 inside one record's string of a whole-file document
    (ragas annotation export, InspectorRAGet experiment, SAFE result, JSON array) is
    that record's error, at the byte's line and field; every other record imports."""
    total = _baseline(fixture)
    doc = json.loads(_original(fixture))
    records = [r for r in _records(doc) if _strings(r)]
    record = data.draw(st.sampled_from(records))
    where = data.draw(st.sampled_from(_strings(record)))
    value = _get(record, where)
    at = data.draw(st.integers(0, len(value)))
    _set(record, where, value[:at] + BAD_BYTE + value[at:])
    raw = _dumps(doc, indent=2).encode().replace(b"\\u0000NOTUTF8\\u0000", b"\xff")
    line = raw[: raw.index(b"\xff")].count(b"\n") + 1
    code, out, imported, path = _import(raw, fixture.name, fixture)
    reported = _check_located(out, path)
    assert code == 1 and imported == total - 1, out
    ((kind, at_line, message),) = reported
    assert kind == "error" and at_line == line, out
    assert "not UTF-8 text (byte 0xff" in message, out
    assert str(where[-1]) in message, out  # the field that holds it


def _get(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def _records(doc: Any) -> list[Any]:
    """The record objects of a whole-file document (SAFE evaluations, ragas samples
    or rows, InspectorRAGet evaluations, RAGChecker results, DeepEval test cases)."""
    if isinstance(doc, list):
        return [r for r in doc if isinstance(r, dict)]
    if isinstance(doc.get("testRunData"), dict):  # DeepEval's .latest_test_run.json
        doc = doc["testRunData"]
    for key in ("evaluations", "results", "testCases"):  # InspectorRAGet v1, v2; DeepEval
        if isinstance(doc.get(key), list):
            return [r for r in doc[key] if isinstance(r, dict)]
    if "per_prompt_data" in doc:
        return [
            entry[side]
            for entry in doc["per_prompt_data"]
            for side in ("side1_posthoc_eval_data", "side2_posthoc_eval_data")
            if isinstance(entry.get(side), dict)
        ]
    return [s for samples in doc.values() for s in samples]


# -- repeated ids ------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=[p.name[:40] for p in FIXTURE_FILES])
def test_repeated_id_loses_nothing_and_names_both_lines(fixture: Path) -> None:
    original = _original(fixture)
    if _is_document(original):
        pytest.skip("ids of whole-file records are their positions: they cannot repeat")
    rows = [json.loads(line) for line in original.splitlines()]
    field = next((f for f in ID_FIELDS if f in rows[0]), None)
    if field is None or len(rows) < 3:
        pytest.skip("no ids in this format's rows")
    total = _baseline(fixture)
    # ids 2, 1, 2: the third repeats the first, and a fallback id "1" would be the
    # second's own id
    rows[0][field], rows[1][field], rows[2][field] = "2", "1", "2"
    text = "".join(_dumps(r) + "\n" for r in rows)
    code, out, imported, path = _import(text, fixture.name, fixture)
    reported = _check_located(out, path)
    if native.sniff(rows[0]):  # ragreview's own format: ids are identities
        assert code == 1 and imported == total - 1
        assert [(k, n) for k, n, _ in reported] == [("error", 3)]
        assert "first on line 1" in reported[0][2]
        return
    assert code == 0 and imported == total, out
    assert [(k, n) for k, n, _ in reported] == [("warning", 3)], out
    assert "first on line 1" in reported[0][2], out
