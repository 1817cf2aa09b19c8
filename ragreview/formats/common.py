"""What the source-format adapters share: ids, sentencizing, building items, patching.

Each adapter turns one source record into a *draft* (canonical JSON object, judge
layer, source text, the source's own id); ``finish`` assigns record ids per docs/formats.md
(the source id, or the 1-based record number where there is none or it repeats) and
validates everything through the one canonical parser, so a bad source record becomes
an ``InputError`` naming file, line and field.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..core.errors import InputError, InputWarning, RecordError
from ..core.import_items import ImportItem, Unchanged
from ..core.labels import CATALOGUE, check_label, check_layer, effective
from ..core.record import Record, parse_record
from ..core.record import kind_of as kind  # re-exported: adapters name JSON types alike
from .base import QUIET, ReadContext
from .json_limits import TOO_DEEP, non_finite
from .jsonio import array_document, iter_lines_raw
from .locator import Locator
from .parquet import Skipped, is_table


@dataclass
class Draft:
    position: int  # line number (JSON Lines; arrays: where it starts) or record number
    number: int  # 1-based record number in the file, the fallback id
    data: dict[str, Any]  # canonical record without id, labels and source
    judge: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str | None = None
    source_id: Any = None
    id_field: str = "id"  # the source's name for its id (in error messages)
    where: str | None = None  # the record's JSON path in a whole-file document
    reviewers: tuple[tuple[str, str, str, Any, str | None], ...] = ()  # see ImportItem
    row: Any = None  # the parsed line ``source`` is the text of (see ImportItem.row)
    raw: bytes | None = None  # ``source`` as UTF-8 bytes, where read so (ImportItem.raw)
    line: bool = True  # ``source`` is a line of a text file (not a table's row)
    # the ``Record``'s fields besides id and data, where the adapter built and checked
    # them as the canonical parser would (``ragbench_plain``): ``finish`` takes them
    parts: dict[str, Any] | None = None
    # with ``parts``: views of the record (``Record.sentence_text``, …) the adapter built
    # while checking it, kept on the record as if computed there
    views: dict[str, Any] | None = None


def unexpected(err: Exception) -> RecordError:
    """A record that broke an adapter in a way it did not foresee, as that record's
    error: one hostile record must not stop the import of the others."""
    if isinstance(err, RecursionError):
        return RecordError("", TOO_DEEP)
    return RecordError("", f"cannot read this record ({type(err).__name__}: {err})")


def finish(
    path: Path,
    drafts: Iterable[Draft | InputError | Unchanged],
    *,
    validate_labels: bool = True,
    ids: Counter[str] | None = None,
    rename: Callable[[str], str] | None = None,
    locator: Locator | None = None,
) -> Iterator[ImportItem | InputError | Unchanged]:
    """Assign ids and validate (lines a re-import skipped pass through).

    A repeated id is only known once every id has been seen: with ``ids`` (the count of
    every source id in the file, see ``leading_ids``) records stream through; without,
    the drafts are read in full first. A record whose id repeats is stored under its
    record number (never one that is another record's id: see ``fallback_id``), with
    a warning naming both lines. ``validate_labels=False`` is for adapters that build
    the judge layer only from keys they resolved against the record themselves.
    ``rename`` maps a canonical field name in an error to the source's own name.
    ``locator`` finds the lines of whole-file drafts (``Draft.where``).
    """
    if ids is None:
        pending = list(drafts)
        texts = (_id_text(d.source_id) for d in pending if isinstance(d, Draft))
        ids = Counter(t for t in texts if t is not None)
        drafts = pending
    first_seen: dict[str, tuple[int | None, str]] = {}  # repeated id -> (line, stored id)

    def line(draft: Draft, field: str = "") -> int | None:
        if draft.where is None or locator is None:
            return draft.position
        return locator.line(_join(draft.where, field))

    for draft in drafts:
        if isinstance(draft, (InputError, Unchanged)):
            yield draft
            continue
        try:
            sid = _id_text(draft.source_id)
            if sid is None and draft.source_id is not None:
                got = kind(draft.source_id)
                raise RecordError(draft.id_field, f"expected a string or integer, got {got}")
            rid = sid if sid is not None and ids[sid] == 1 else fallback_id(draft.number, ids)
            obj = {"id": rid, **draft.data}
            if locator is not None and locator.may_hold_unstorable:
                # (a part the records share, such as an InspectorRAGet task, may hold it;
                # a reader that walked its records has found it already)
                shared = [obj, draft.judge, [list(r) for r in draft.reviewers], draft.source]
                found = locator.unstorable(shared)
                if found is not None:
                    raise RecordError(re.sub(r"^\[\d+\]\.?", "", found[0]), found[1])
            if draft.parts is None:
                record = parse_record(obj)
            else:  # (obj holds no labels: it is the record's data as it is)
                record = _record(rid, obj, draft.parts, draft.views)
            judge: Mapping[str, Mapping[str, Any]] = draft.judge
            if validate_labels and judge:
                judge = check_layer(record, judge, "labels", human=False)
        except Exception as err:  # noqa: BLE001 (see ``unexpected``)
            rec_err = err if isinstance(err, RecordError) else unexpected(err)
            field = rename(rec_err.field) if rename is not None else rec_err.field
            full = _join(draft.where, field) if draft.where is not None else field
            yield InputError(str(path), line(draft, field), full or None, rec_err.message)
            continue
        try:
            reviewers = (
                tuple(_checked_reviewers(record, draft.reviewers)) if draft.reviewers else ()
            )
        except RecordError as err:
            yield InputError(str(path), line(draft), err.field, err.message)
            continue
        if sid is not None and rid != sid:
            if sid in first_seen:
                first_line, first_rid = first_seen[sid]
                yield InputWarning(
                    str(path),
                    line(draft),
                    _join(draft.where or "", draft.id_field),
                    f"{sid!r} repeats (first on line {first_line}): stored by record "
                    f"number, that one as {first_rid!r} and this one as {rid!r}",
                )
            else:
                first_seen[sid] = (line(draft), rid)
        own = sid is not None and rid == sid and draft.source is not None and draft.line
        # ImportItem(position, record, judge, {}, source, reviewers, own, row, raw), built
        # as ``_record`` builds the record
        item = _NEW(ImportItem)
        item.__dict__.update(
            position=draft.position,
            record=record,
            judge=judge,
            human={},
            source=draft.source,
            reviewers=reviewers,
            own_source=own,
            row=draft.row,
            raw=draft.raw,
            reviewed=False,
            rules={},
        )
        yield item


# Record's defaults (``_record``): plain values as they are, factories called per record
_RECORD_DEFAULTS = {f.name: f.default for f in fields(Record) if f.default is not MISSING}
_RECORD_FACTORIES = [
    (f.name, f.default_factory) for f in fields(Record) if f.default_factory is not MISSING
]
_NEW = object.__new__


def _record(
    rid: str, data: dict[str, Any], parts: dict[str, Any], views: dict[str, Any] | None
) -> Record:
    """``Record(id=rid, data=data, **parts)`` with ``views`` kept as its cached views,
    built without the frozen dataclass's guarded ``__setattr__`` per field (sixteen a
    record, a tenth of reading a RAGBench row; Record has no ``__post_init__``)."""
    record = _NEW(Record)
    values = record.__dict__
    values.update(_RECORD_DEFAULTS)
    for name, factory in _RECORD_FACTORIES:
        values[name] = factory()
    values["id"], values["data"] = rid, data
    values.update(parts)
    if views:
        values.update(views)
    return record


def _checked_reviewers(
    record: Record, rows: Iterable[tuple[str, str, str, Any, str | None]]
) -> Iterator[tuple[str, str, str, Any, str | None]]:
    for who, name, target, value, reason in rows:
        try:
            target, value = check_label(record, name, target, value, human=False)
        except RecordError as err:
            raise RecordError(f"{name}.{who}", err.message) from None
        yield who, name, target, value, reason


def _join(where: str | None, field: str) -> str:
    if not where:
        return field
    if not field:
        return where
    return where + field if field.startswith("[") else f"{where}.{field}"


def _id_text(value: Any) -> str | None:
    """A source id as text; None when there is none, or it is not a string or integer."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return str(value)
    return None


def fallback_id(number: int, ids: Mapping[str, int]) -> str:
    """The id of a record without a usable id of its own: its 1-based record number, or,
    where that is another record's id in the file, the number behind as many ``#`` as
    make it unique (``#17``). Different numbers never meet, so fallbacks stay distinct."""
    rid = str(number)
    while rid in ids:
        rid = "#" + rid
    return rid


def line_drafts(
    path: Path,
    text: str | None,
    draft: Callable[[Any, int, int, str], Draft],
    nan: bool = False,
    ctx: ReadContext = QUIET,
) -> Iterator[Draft | InputError | Unchanged]:
    """``draft(obj, line number, record number, raw line)`` for each JSON line; a line that
    is not JSON, holds NaN or Infinity (unless ``nan``), or makes ``draft`` fail becomes
    an error at that line. A file that is one JSON array is read as its elements (each
    one's JSON text its "line", the line it starts on its line number). ``ctx``: lines
    are read as ``jsonio.iter_lines_raw`` reads them under it."""
    records = None if text is None else array_document(path, text)
    if records is not None:
        assert text is not None
        yield from _array_drafts(path, text, records, draft, nan)
        return
    number = 0
    # a table's rows are not lines a re-import can skip unparsed (base.KnownLines)
    lines = text is not None or not is_table(path)
    for line_no, line, obj, raw in iter_lines_raw(path, text, nan, ctx):
        if type(obj) is Skipped:  # another process's rows (base.Share)
            number += obj.rows
            continue
        number += 1
        if isinstance(obj, (InputError, Unchanged)):
            yield obj
            continue
        try:
            made = draft(obj, line_no, number, line)
        except Exception as err:  # noqa: BLE001 (see ``unexpected``)
            rec_err = err if isinstance(err, RecordError) else unexpected(err)
            yield InputError(str(path), line_no, rec_err.field or None, rec_err.message)
            continue
        if made.source is line:  # (the row and the bytes read: ImportItem.row, .raw)
            made.row, made.raw = obj, raw
        made.line = lines
        yield made


def _array_drafts(
    path: Path,
    text: str,
    records: list[Any],
    draft: Callable[[Any, int, int, str], Draft],
    nan: bool,
) -> Iterator[Draft | InputError | Unchanged]:
    locator = Locator(text)
    for number, value in enumerate(records, start=1):
        where = f"[{number - 1}]"
        try:
            found = None if nan else non_finite(value)
            if found is None:
                found = locator.unstorable(value)
            if found is not None:
                raise RecordError(found[0], found[1])
            source = json.dumps(value, ensure_ascii=False)
            yield draft(value, locator.line(where) or 1, number, source)
        except Exception as err:  # noqa: BLE001 (see ``unexpected``)
            rec_err = err if isinstance(err, RecordError) else unexpected(err)
            full = _join(where, rec_err.field)
            yield InputError(str(path), locator.line(full), full, rec_err.message)


def document_drafts(
    path: Path,
    records: Iterable[tuple[str, Any] | InputError],
    draft: Callable[[Any, int, str], Draft],
    locator: Locator,
) -> Iterator[Draft | InputError | Unchanged]:
    """``draft(value, record number, JSON path)`` for each record of a whole-file
    document, given as (JSON path, value) (errors pass through); a record that holds
    NaN or Infinity or makes ``draft`` fail becomes an error at its line (found by
    ``locator``)."""
    number = 0
    for entry in records:
        if isinstance(entry, InputError):
            yield entry
            continue
        where, value = entry
        number += 1
        try:
            found = non_finite(value)
            if found is None:
                found = locator.unstorable(value)
            if found is not None:
                raise RecordError(found[0], found[1])
            made = draft(value, number, where)
            made.where = where
            yield made
        except Exception as err:  # noqa: BLE001 (see ``unexpected``)
            rec_err = err if isinstance(err, RecordError) else unexpected(err)
            full = _join(where, rec_err.field)
            yield InputError(str(path), locator.line(full), full, rec_err.message)


def expect(obj: Mapping[str, Any], name: str, types: type | tuple, optional: bool = False) -> Any:
    """``obj[name]`` checked against ``types``; RecordError naming the field otherwise."""
    if name not in obj or obj[name] is None:
        if optional:
            return None
        raise RecordError(name, "missing")
    value = obj[name]
    if not isinstance(value, types) or isinstance(value, bool) and bool not in _tuple(types):
        raise RecordError(name, f"expected {_names(types)}, got {kind(value)}")
    return value


def _tuple(types: type | tuple) -> tuple:
    return types if isinstance(types, tuple) else (types,)


def _names(types: type | tuple) -> str:
    names = {str: "a string", list: "a list", dict: "an object", int: "a number"}
    names.update({float: "a number", bool: "a boolean"})
    return " or ".join(dict.fromkeys(names.get(t, t.__name__) for t in _tuple(types)))


# -- sentencizing (docs/formats.md) ---------------------------------------------------


def keyed_document(doc_index: int, text: str) -> list[list[str]]:
    """``[[key, sentence], …]`` for one raw document, keys ``0a``, ``0b``, …"""
    from . import sentencizer  # lazy: nltk must not load with the formats

    return list(map(list, sentencizer.keyed_document(doc_index, text)))


def keyed_response(text: str) -> list[list[str]]:
    """``[[key, sentence], …]`` for a raw response, keys ``a``, ``b``, …"""
    from . import sentencizer

    return list(map(list, sentencizer.keyed_response(text)))


# -- writing back ----------------------------------------------------------------------


def changed(judge: Mapping[str, Mapping[str, Any]], human: Mapping[str, Mapping[str, Any]]) -> bool:
    """True when the human layer changes any effective label (re-asserting the judge's
    value is no change, so such a record is written back byte-for-byte)."""
    if not human:
        return False
    return effective(judge, human) != {k: dict(v) for k, v in judge.items()}


def reread(draft: Draft, *, validate_labels: bool = True) -> dict[str, dict[str, Any]]:
    """The labels a re-import of one written-back record gives: ``draft`` is the
    adapter's reading of the patched source, finished as ``read`` finishes it."""
    (item,) = finish(Path("export"), [draft], validate_labels=validate_labels, ids=Counter())
    if not isinstance(item, ImportItem):  # a writer bug: its own output does not read back
        raise AssertionError(f"written record does not read back: {item}")
    return effective(item.judge, item.human)


def lost_labels(
    want: Mapping[str, Mapping[str, Any]], got: Mapping[str, Mapping[str, Any]]
) -> set[str]:
    """Names of the labels in ``want`` (a record's effective labels) that ``got`` (what a
    re-import of its export gives) does not give back. An absent label stands for the
    catalogue's default (an absent ``relevant`` is false); a label that is undefined in
    ``want`` may come back defined, because some fields are complete lists (RGB's
    ``label`` has a bit for every answer part; see docs/formats.md)."""
    lost = set()
    for name in set(want) | set(got):
        default = CATALOGUE[name].default if name in CATALOGUE else None
        w_targets, g_targets = want.get(name, {}), got.get(name, {})
        for target in set(w_targets) | set(g_targets):
            w = w_targets.get(target, default)
            g = g_targets.get(target, default)
            if w is not None and not same_value(w, g):
                lost.add(name)
                break
    return lost


def same_value(a: Any, b: Any) -> bool:
    """Label values equal as JSON values (``True`` is not ``1``; ``7`` is ``7.0``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def loads_source(text: str) -> Any:
    """The source record back from its stored text (NaN literals allowed)."""
    return json.loads(text)


def dumps_source(obj: Any, compact: bool = False) -> str:
    """A patched source record as one line. ``json`` keeps NaN as the sources wrote it
    (orjson would turn it into null); ``compact`` writes no spaces after separators,
    as pandas' ``to_json`` (MT-RAG's scripts) does."""
    if compact:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(obj, ensure_ascii=False)


_FIRST_KEY = re.compile(r'\s*\{\s*"(?:[^"\\]|\\.)*":(\s?)')


def is_compact(line: str) -> bool:
    """Whether a source line was written without spaces after ``:`` (pandas does)."""
    found = _FIRST_KEY.match(line)
    return found is not None and not found.group(1)


def finite(value: Any) -> float | None:
    """A stored score as a number, or None (null, NaN, Infinity, non-numbers)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int) and abs(value) < 2**1023:  # (larger: OverflowError)
        return float(value)
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None


def first(value: Any) -> Any:
    """First element of a list-valued field, or the value itself."""
    if isinstance(value, list):
        return value[0] if value else None
    return value
