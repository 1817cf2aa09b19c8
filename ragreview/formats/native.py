"""ragreview's own JSON Lines format (docs/formats.md): lossless in both directions."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import InputError, RecordError
from ..core.labels import check_layer
from ..core.record import ImportItem, Unchanged, parse_record
from .base import QUIET, ExportRecord, Listing, ReadContext, Traits
from .common import unexpected
from .json_limits import STORED_DEPTH, too_deep_to_store
from .jsonio import dumps_line, iter_lines

NAME = "ragreview"
LISTING = Listing(
    "JSON Lines / parquet rows",
    (("id", "labels"), ("id", "documents")),
    "everything (ragreview's own records)",
)
TRAITS = Traits(holds_everything=True)
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
        yield ImportItem(number, record, judge, human)


def to_json(item: ExportRecord) -> dict[str, Any]:
    obj = dict(item.record.data)
    labels = {}
    if item.judge:
        labels["judge"] = item.judge
    if item.human:
        labels["human"] = item.human
    if labels:
        obj["labels"] = labels
    return obj


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    count = 0
    for item in items:
        out.write(dumps_line(to_json(item)))
        out.write("\n")
        count += 1
    return count
