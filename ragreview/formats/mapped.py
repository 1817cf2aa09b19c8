"""A user's own JSON Lines or CSV rows, mapped field by field onto the canonical
record (``--map question=query,response=answer,contexts=retrieved[].text``, or the same
pairs in a TOML file; docs/formats.md).

A mapping is ``target = path``. A path names a field of the row: ``a.b`` goes into
objects, ``a[].b`` takes ``b`` of every element of the list ``a``, ``a[0]`` one
element. Targets:

- any canonical field (``id``, ``task``, ``question``, ``conversation``,
  ``documents``, ``response``, ``references``, ``answer_parts``, ``answerability``,
  ``facts``, ``statements``, …), taken as it is, except that a string ``response`` and
  string ``documents`` are split into keyed sentences, and a string ``references``
  becomes a one-element list;
- ``contexts``: a list of texts, the documents (each split into keyed sentences);
- ``scores.<name>``: one number of the record's ``scores``;
- ``label.<name>``: a record-level label of the judge layer (``label.idk=eval.idk``).

A path that leads nowhere in any of the first ``HEAD_ROWS`` rows is an error naming the
target (a typo would import every record without that field); with ``--strict`` so is
every row where a path leads nowhere.

CSV cells are text: a cell mapped to a list or object is read as JSON, a score as a
number. The dataset keeps the mapping; ``export --as source`` writes every row back as
read, with the record-level labels a review changed written at their mapped paths, and
refuses overrides the mapping has no field for.
"""

from __future__ import annotations

import csv
import json
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import InputError, RecordError
from ..core.import_items import ImportItem, Unchanged
from ..core.labels import check_layer, effective
from ..core.record import KNOWN_FIELDS
from .base import QUIET, ExportRecord, Listing, ReadContext, Traits
from .common import (
    Draft,
    changed,
    dumps_source,
    finish,
    keyed_document,
    keyed_response,
    kind,
    loads_source,
)
from .json_limits import not_utf8, shown
from .jsonio import iter_lines

NAME = "mapped"
LISTING = Listing(
    "never: chosen with --map target=path,… (JSON Lines or CSV)",
    (),
    "whatever the mapping names (docs/formats.md)",
)
TRAITS = Traits()
document = None  # its document is the mapping: formats.source_document
_STEP = re.compile(r"^([^\[\]]+)((?:\[\d*\])*)$")
SPECIAL = ("contexts",)


def sniff(obj: dict[str, Any]) -> bool:
    return False  # never detected: chosen by --map


def parse_spec(spec: str) -> dict[str, str]:
    """``--map`` text (``a=b,c=d``) or the path of a TOML file with those pairs (at the
    top level or under ``[map]``) as {target: path}."""
    candidate = Path(spec)
    if spec.endswith(".toml"):
        try:
            data = tomllib.loads(candidate.read_text(encoding="utf-8"))
        except OSError as err:
            raise InputError(spec, None, None, f"cannot read mapping: {err.strerror}") from None
        except tomllib.TOMLDecodeError as err:
            raise InputError(spec, None, None, f"invalid TOML ({err})") from None
        table = data.get("map", data)
        pairs = {str(k): v for k, v in table.items()}
        bad = [k for k, v in pairs.items() if not isinstance(v, str)]
        if bad:
            raise InputError(spec, None, bad[0], "expected a field path (a string)")
        return check(pairs, spec)
    pairs = {}
    for part in spec.split(","):
        if not part.strip():
            continue
        target, sep, path = part.partition("=")
        if not sep or not target.strip() or not path.strip():
            raise InputError("--map", None, None, f"expected target=path, got {part.strip()!r}")
        pairs[target.strip()] = path.strip()
    return check(pairs, "--map")


def check(pairs: dict[str, str], where: str) -> dict[str, str]:
    for target, path in pairs.items():
        head = target.split(".", 1)[0]
        ok = (
            target in KNOWN_FIELDS - {"labels", "source"}
            or target in SPECIAL
            or head in ("scores", "label")
            and "." in target
        )
        if not ok:
            raise InputError(
                where,
                None,
                target,
                "unknown target (a record field, contexts, scores.<name> or label.<name>)",
            )
        for step in path.split("."):
            if not _STEP.match(step):
                raise InputError(where, None, target, f"bad field path {path!r}")
    if not pairs:
        raise InputError(where, None, None, "empty mapping")
    return pairs


_MISSING = object()


def get(obj: Any, path: str) -> Any:
    """The value at ``path`` in ``obj`` (``_MISSING`` when a field is absent)."""
    return _get(obj, path.split("."))


def _get(obj: Any, steps: list[str]) -> Any:
    if not steps:
        return obj
    match = _STEP.match(steps[0])
    assert match is not None
    name, brackets = match.group(1), match.group(2)
    if not isinstance(obj, dict) or name not in obj:
        return _MISSING
    value = obj[name]
    for index in re.findall(r"\[(\d*)\]", brackets):
        if not isinstance(value, list):
            return _MISSING
        if index == "":  # every element
            out = [_get(v, steps[1:]) for v in value]
            return [v for v in out if v is not _MISSING]
        i = int(index)
        if i >= len(value):
            return _MISSING
        value = value[i]
    return _get(value, steps[1:])


def leads_somewhere(obj: Any, path: str) -> bool:
    """True when ``path`` reaches a value in ``obj`` (null counts; through ``a[]`` it
    must reach one in some element, unless the list is empty: then it cannot tell)."""
    return _leads(obj, path.split("."))


def _leads(obj: Any, steps: list[str]) -> bool:
    if not steps:
        return True
    match = _STEP.match(steps[0])
    assert match is not None
    name, brackets = match.group(1), match.group(2)
    if not isinstance(obj, dict) or name not in obj:
        return False
    value = obj[name]
    for index in re.findall(r"\[(\d*)\]", brackets):
        if not isinstance(value, list):
            return False
        if index == "":
            return not value or any(_leads(v, steps[1:]) for v in value)
        if int(index) >= len(value):
            return False
        value = value[int(index)]
    return _leads(value, steps[1:])


def _set(obj: dict[str, Any], path: str, value: Any) -> bool:
    """Set a plain dotted path (no brackets); False when it cannot be."""
    steps = path.split(".")
    if any("[" in s for s in steps):
        return False
    for step in steps[:-1]:
        obj = obj.setdefault(step, {})
        if not isinstance(obj, dict):
            return False
    obj[steps[-1]] = value
    return True


# -- reading --------------------------------------------------------------------------


def _rows(path: Path, text: str | None, ctx: ReadContext = QUIET) -> Iterator[tuple[int, str, Any]]:
    """(line, source text, row) for a JSON Lines file, or a CSV file by its suffix
    (``ctx``: a JSON line's bytes are reported)."""
    if path.suffix.lower() != ".csv":
        yield from iter_lines(path, text, ctx=ctx)
        return
    try:
        # a byte that is not UTF-8 is kept as a lone surrogate (json_limits): the row
        # holding it is that row's error, at the column holding it
        fh = path.open(encoding="utf-8-sig", errors="surrogateescape", newline="")
    except OSError as err:
        raise InputError(str(path), None, None, f"cannot read file: {err.strerror}") from None
    with fh:
        reader = csv.DictReader(fh)
        try:
            header = reader.fieldnames or []
            found = not_utf8(header)
            if found is not None:  # every row would hold it: the file is refused
                column = shown(header[int(found[0].strip("[]"))])
                yield reader.line_num, "", InputError(str(path), 1, column, found[1])
                return
            for row in reader:
                found = not_utf8(row)
                if found is not None:
                    bad = InputError(str(path), reader.line_num, found[0], found[1])
                    yield reader.line_num, "", bad
                    continue
                yield reader.line_num, json.dumps(row, ensure_ascii=False), dict(row)
        except csv.Error as err:
            yield reader.line_num, "", InputError(str(path), reader.line_num, None, str(err))


TEXT_TARGETS = ("id", "question", "task", "response", "answerability")


def _from_csv(value: Any, target: str) -> Any:
    """A CSV cell as the value a JSON row would hold: lists, objects, numbers and
    booleans from their JSON text; text targets and other cells as they are."""
    if target in TEXT_TARGETS or not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        if value.strip()[:1] in ("[", "{"):
            raise RecordError("", "expected JSON in this cell") from None
        return value


def _number(value: Any, target: str) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordError(target, f"expected a number, got {kind(value)}")
    return float(value)


def draft(
    row: Any, line_no: int, number: int, line: str, mapping: Mapping[str, str], csv_row: bool
) -> Draft:
    if not isinstance(row, dict):
        raise RecordError("", f"expected a JSON object, got {kind(row)}")
    data: dict[str, Any] = {}
    judge: dict[str, dict[str, Any]] = {}
    scores: dict[str, float | None] = {}
    source_id = None
    for target, path in mapping.items():
        value = get(row, path)
        if value is _MISSING or value is None:
            continue
        try:
            if csv_row:
                value = _from_csv(value, target)
            if target == "id":
                source_id = value
            elif target.startswith("scores."):
                scores[target[len("scores.") :]] = _number(value, path)
            elif target.startswith("label."):
                judge[target[len("label.") :]] = {"*": value}
            elif target in ("contexts", "documents") and _texts(value):
                data["documents"] = [
                    {"sentences": keyed_document(i, t)} for i, t in enumerate(value)
                ]
            elif target == "response" and isinstance(value, str):
                data["response"] = keyed_response(value)
            elif target == "references" and isinstance(value, str):
                data["references"] = [value]
            else:
                data[target] = value
        except RecordError as err:
            raise RecordError(path, err.message) from None
    if scores:
        data["scores"] = {**(data.get("scores") or {}), **scores}
    return Draft(line_no, number, data, judge, line, source_id)


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


HEAD_ROWS = 10  # the first rows a mapped path must lead somewhere in (as detection's)


def read(
    path: Path,
    text: str | None = None,
    ctx: ReadContext = QUIET,
    mapping: Mapping[str, str] | None = None,
    strict: bool = False,
) -> Iterator[ImportItem | InputError | Unchanged]:
    """The mapped rows. InputError (nothing read) when a path of ``mapping`` leads
    nowhere in any of the first rows: a typo would import every record without that
    field. With ``strict`` a path that leads nowhere in any row is that row's error."""
    if mapping is None:
        raise InputError(str(path), None, None, "a mapped file needs --map")
    _check_paths(path, mapping, text)
    drafts = _drafts(path, text, mapping, strict, ctx)
    return finish(path, drafts, rename=_source_name(mapping))


def _check_paths(path: Path, mapping: Mapping[str, str], text: str | None) -> None:
    # (its own read of the head: the stream's reader reports progress once it starts)
    rows = [(n, row) for n, _l, row in islice(_rows(path, text), HEAD_ROWS)]
    head = [row for _n, row in rows if isinstance(row, dict)]
    if not head:
        return  # no row to tell by: each row's error is reported as it is read
    first = next(n for n, row in rows if isinstance(row, dict))
    for target, field in mapping.items():
        if not any(leads_somewhere(row, field) for row in head):
            raise InputError(
                str(path),
                first,
                target,
                f"the path {field!r} leads nowhere in the first {len(head)} rows "
                "(see docs/formats.md, --map)",
            )


def _source_name(mapping: Mapping[str, str]) -> Any:
    def rename(field: str) -> str:
        head = field.split("[", 1)[0].split(".", 1)[0]
        return mapping.get(head, field) if head in mapping else field

    return rename


def _drafts(
    path: Path,
    text: str | None,
    mapping: Mapping[str, str],
    strict: bool = False,
    ctx: ReadContext = QUIET,
) -> Iterator[Draft | InputError | Unchanged]:
    csv_rows = path.suffix.lower() == ".csv"
    number = 0
    for line_no, line, row in _rows(path, text, ctx):
        number += 1
        if isinstance(row, InputError):
            yield row
            continue
        dead = [t for t, f in mapping.items() if not leads_somewhere(row, f)] if strict else []
        if dead:
            why = f"the path {mapping[dead[0]]!r} leads nowhere in this row (--strict)"
            yield InputError(str(path), line_no, dead[0], why)
            continue
        try:
            yield draft(row, line_no, number, line, mapping, csv_rows)
        except RecordError as err:
            yield InputError(str(path), line_no, err.field, err.message)


def mapping_document(mapping: Mapping[str, str], path: Path) -> str:
    """Stored with the dataset: the mapping (and the file's kind) for writing back."""
    return json.dumps({"map": dict(mapping), "csv": path.suffix.lower() == ".csv"})


# -- writing back ------------------------------------------------------------------------


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    stored = json.loads(settings.get("source.document") or "{}")
    mapping: dict[str, str] = stored.get("map") or {}
    count = 0
    writer = None
    for item in items:
        if item.source is None:
            raise InputError(item.record.id, None, "source", "record has no source row")
        row = loads_source(item.source)
        if changed(item.judge, item.human):
            patch(row, item, mapping)
        count += 1
        if stored.get("csv"):
            if writer is None:
                writer = csv.DictWriter(out, fieldnames=list(row), lineterminator="\n")
                writer.writeheader()
            writer.writerow(row)
        elif not item.human or not changed(item.judge, item.human):
            out.write(item.source.rstrip("\n") + "\n")
        else:
            out.write(dumps_source(row) + "\n")
    return count


def patch(row: dict[str, Any], item: ExportRecord, mapping: Mapping[str, str]) -> None:
    """Write the record's overrides at their mapped paths. A label with no plain mapped
    path (``label.<name>``) is left out here; the export's loss check (``read_back``)
    names it before anything is written."""
    eff = effective(item.judge, item.human)
    for name, targets in eff.items():
        for target, value in targets.items():
            if item.judge.get(name, {}).get(target) == value:
                continue
            path = mapping.get(f"label.{name}")
            if target == "*" and path is not None:
                _set(row, path, value)


def read_back(item: ExportRecord, settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The labels a re-import of the record as ``write`` writes it gives (the mapped
    ``label.*`` fields are the judge layer of the re-import)."""
    stored = json.loads(settings.get("source.document") or "{}")
    mapping: dict[str, str] = stored.get("map") or {}
    row = loads_source(item.source or "{}")
    patch(row, item, mapping)
    return check_layer(item.record, draft(row, 0, 0, "", mapping, csv_row=False).judge, "labels")
