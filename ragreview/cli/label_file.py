"""``ragreview label PATH --from FILE``: many label changes in one call (issue 27).

Starting the command costs more than one label change, so a script of 2,000 reviews
through ``ragreview label`` spent most of its time starting; one call with a file of
the changes starts once. Each line is checked as the single call checks its arguments,
and applied on its own (one transaction per label, as from the TUI); a bad line is
reported as ``FILE:LINE: field: problem`` and skipped, and the command then exits 1.

FILE is CSV (``.csv``, a header naming ``record_id,name,target,value`` and optionally
``reason``; VALUE as on the command line: JSON or a bare word, ``judge`` reverts) or
JSON Lines (any other name; one object per line with those keys; ``value`` is the JSON
value itself and ``null`` reverts to the judge's).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import InputError, RagreviewError, RecordError
from ..core.labels import Value, check_label, parse_value_text
from ..store import history
from ..store import records as store_records

if TYPE_CHECKING:
    import sqlite_utils

FIELDS = ("record_id", "name", "target", "value")


@dataclass(frozen=True)
class Change:
    line: int
    record_id: str
    name: str
    target: str
    value: Value  # None reverts to the judge's value
    reason: str | None


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(str(path), None, None, "not UTF-8 text") from None
    except OSError as err:
        raise InputError(str(path), None, None, err.strerror or str(err)) from None


def _strings(path: Path, line: int, row: dict[str, Any]) -> tuple[str, str, str]:
    out = []
    for field in ("record_id", "name", "target"):
        value = row.get(field)
        if not isinstance(value, str) or value == "":
            raise InputError(str(path), line, field, "missing (a non-empty string)")
        out.append(value)
    return out[0], out[1], out[2]


def _reason(path: Path, line: int, row: dict[str, Any]) -> str | None:
    reason = row.get("reason")
    if reason in (None, ""):
        return None
    if not isinstance(reason, str):
        raise InputError(str(path), line, "reason", "expected a string")
    return reason


def read_changes(path: Path) -> Iterator[Change | InputError]:
    """The file's changes in order, or the error of each bad line."""
    text = _text(path)
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines(keepends=True))
        missing = [f for f in FIELDS if f not in (reader.fieldnames or [])]
        if missing:
            raise InputError(str(path), 1, missing[0], f"the header names no {missing[0]!r} column")
        for row in reader:
            line = reader.line_num
            try:
                rid, name, target = _strings(path, line, row)
                raw = row.get("value")
                if raw is None or raw == "":
                    raise InputError(str(path), line, "value", "missing")
                value = None if raw == "judge" else parse_value_text(raw)
                yield Change(line, rid, name, target, value, _reason(path, line, row))
            except InputError as err:
                yield err
        return
    for line, raw_line in enumerate(text.splitlines(), 1):
        if not raw_line.strip():
            continue
        try:
            try:
                row = json.loads(raw_line)
            except ValueError as err:
                raise InputError(str(path), line, None, f"not JSON ({err})") from None
            if not isinstance(row, dict):
                raise InputError(str(path), line, None, "expected an object")
            rid, name, target = _strings(path, line, row)
            if "value" not in row:
                raise InputError(str(path), line, "value", "missing (null reverts)")
            yield Change(line, rid, name, target, row["value"], _reason(path, line, row))
        except InputError as err:
            yield err


def apply(
    db: sqlite_utils.Database, dataset: str, path: Path, change: Change, reviewer: str
) -> int | None:
    """Check one change as ``ragreview label`` does, then apply it (its own transaction);
    an invalid one raises InputError naming the line and the field."""
    try:
        stored = store_records.find(db, change.record_id, dataset)
    except RagreviewError as err:
        raise InputError(str(path), change.line, "record_id", str(err)) from None
    try:
        if change.value is None:
            history.check_label_target(stored.record, change.name, change.target)
        else:
            check_label(stored.record, change.name, change.target, change.value)
    except RecordError as err:
        field = err.field if err.field in ("target", "value") else "name"
        raise InputError(str(path), change.line, field, err.message) from None
    except RagreviewError as err:  # (check_label_target: no such key)
        raise InputError(str(path), change.line, "target", str(err)) from None
    return history.set_label(
        db,
        stored.rowid,
        change.name,
        change.target,
        change.value,
        reviewer,
        reason=change.reason,
        stored=stored,
    )
