"""ragreview's own JSON Lines format (docs/formats.md): lossless in both directions."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import InputError, RecordError
from ..core.guidelines import valid_rule_id
from ..core.import_items import ImportItem, Unchanged
from ..core.keys import normalize_key
from ..core.labels import check_layer
from ..core.record import parse_record
from .base import QUIET, ExportRecord, Listing, ReadContext, Traits
from .common import kind, unexpected
from .json_limits import STORED_DEPTH, too_deep_to_store
from .jsonio import dumps_line, iter_lines

NAME = "ragreview"
LISTING = Listing(
    "JSON Lines / parquet rows",
    (("id", "labels"), ("id", "documents")),
    "everything (ragreview's own records)",
)
# the export passes each override's guideline rule (labels.rules)
TRAITS = Traits(holds_everything=True, needs_rules=True)
read_back = None  # holds every label: nothing to read back
document = None  # one record per line: its line is all a write needs


def sniff(obj: dict[str, Any]) -> bool:
    if "labels" in obj:
        return True
    docs = obj.get("documents")
    return (
        bool(docs)
        and isinstance(docs, list)
        and isinstance(docs[0], dict)
        and "sentences" in docs[0]
    )


def read(
    path: Path, text: str | None = None, ctx: ReadContext = QUIET
) -> Iterator[ImportItem | InputError | Unchanged]:
    seen: dict[str, int] = {}
    for number, line, obj in iter_lines(path, text, ctx=ctx):  # NaN: null (see test_native)
        if isinstance(obj, InputError):
            yield obj
            continue
        try:
            if too_deep_to_store(line, obj):  # its other fields are stored as they are
                raise RecordError("", f"nested more than {STORED_DEPTH} levels deep")
            record = parse_record(obj)
            labels = obj.get("labels")
            if labels is None:
                labels = {}
            if not isinstance(labels, dict):
                raise RecordError("labels", "expected an object {judge: …, human: …}")
            judge = check_layer(record, labels.get("judge"), "labels.judge", human=False)
            human = check_layer(record, labels.get("human"), "labels.human", human=True)
            rules = read_rules(labels.get("rules"), human)
        except Exception as err:  # noqa: BLE001 (see common.unexpected)
            rec_err = err if isinstance(err, RecordError) else unexpected(err)
            yield InputError(str(path), number, rec_err.field or None, rec_err.message)
            continue
        if record.id in seen:
            yield InputError(
                str(path),
                number,
                "id",
                f"duplicate id {record.id!r} (first on line {seen[record.id]})",
            )
            continue
        seen[record.id] = number
        yield ImportItem(number, record, judge, human, rules=rules)


def read_rules(value: Any, human: dict[str, dict[str, Any]]) -> dict[tuple[str, str], str]:
    """``labels.rules`` (``{label: {target: "R3"}}``): the guideline rule each human
    value applies (docs/align.md); only on a human value."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RecordError("labels.rules", 'expected an object {label: {target: "R3"}}')
    out: dict[tuple[str, str], str] = {}
    for name, targets in value.items():
        if not isinstance(targets, dict):
            raise RecordError(f"labels.rules.{name}", 'expected an object {target: "R3"}')
        for target, rule in targets.items():
            where = f"labels.rules.{name}.{target}"
            if not isinstance(rule, str) or not valid_rule_id(rule):
                got = repr(rule[:40]) if isinstance(rule, str) else kind(rule)  # (not all of it)
                raise RecordError(where, f"expected a rule id such as R3, got {got}")
            # (a key as labels.human may write it too: "0a." is 0a there)
            key = target if target in human.get(name, {}) else normalize_key(target)
            if key not in human.get(name, {}):
                raise RecordError(where, "names a rule for no value in labels.human")
            out[(name, key)] = rule
    return out


def to_json(item: ExportRecord, rules: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    """The record's line; ``rules``: its human values' guideline rules by label and
    target (``labels.rules``)."""
    obj = dict(item.record.data)
    labels: dict[str, Any] = {}
    if item.judge:
        labels["judge"] = item.judge
    if item.human:
        labels["human"] = item.human
    if rules:
        labels["rules"] = rules
    if labels:
        obj["labels"] = labels
    return obj


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    count = 0
    rules = settings.get("export.rules") or {}  # record id -> {label: {target: rule}}
    for item in items:
        out.write(dumps_line(to_json(item, rules.get(item.record.id))))
        out.write("\n")
        count += 1
    return count
