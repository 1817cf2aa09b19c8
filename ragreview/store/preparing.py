"""The DB-free half of an import: a record *prepared* to store (``Prepared``: its JSON
text, label rows, metric values, compressed source and hashes, as plain values cheap to
send across, ``services.entry_wire``), and the record back from that form (``item``).

Preparing is most of an import's work and can run in another process
(``services.import_pipeline``), which imports this module and not the storing half
(``store.importer``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from ..core import metrics
from ..core.errors import InputError
from ..core.import_items import ImportItem, Unchanged
from ..core.labels import Layer
from ..core.record import line_hash, parse_record
from . import metric_import_writes, source_blob
from .records import content_hash, dumps, label_value, loads

_BOOL_JSON = {True: "true", False: "false"}


LabelRow = tuple[str, str, str]  # (name, target, value as JSON)


def _label_flat(layer: Layer) -> tuple:
    """A layer's (name, target, value as JSON) rows end to end, (name, target, value,
    name, …): one tuple per record instead of one per label (about 12 a RAGBench
    record) to send across and back (issue 27: the hand-over was a tenth of an
    import's CPU); ``label_rows`` gives the rows back."""
    out: list[Any] = []
    for name, targets in layer.items():  # (loops: a generator's frame per label cost more)
        for target, value in targets.items():
            # (most labels are booleans: skip the serializer for them, hot on import)
            out += (
                name,
                target,
                _BOOL_JSON[value] if value is True or value is False else dumps(value),
            )
    return tuple(out)


def label_rows(flat: tuple) -> Iterator[LabelRow]:
    """The (name, target, value) rows of ``_label_flat``'s form."""
    it = iter(flat)
    return zip(it, it, it, strict=True)


def _layer(rows: Iterable[LabelRow]) -> Layer:
    layer: dict[str, dict[str, Any]] = {}
    for name, target, value in rows:
        layer.setdefault(name, {})[target] = label_value(value)
    return layer


class Prepared(NamedTuple):
    """One record ready to store: everything ``import_records`` needs, as plain values
    (cheap to send from a worker process: ``services.entry_wire``)."""

    position: int
    id: str
    task: str | None
    data: str  # canonical record JSON (without id and labels)
    source: str | None
    judge: tuple  # its judge labels as (name, target, value as JSON, name, …) (label_rows)
    human: tuple  # labels the file itself marks as human (rare), in the same form
    metrics: metric_import_writes.Values  # its metric values as a new record (effective = judge)
    reviewers: tuple = ()  # ImportItem.reviewers: named reviewers' labels from the file
    own_source: bool = False  # ImportItem.own_source: its line's hash is stored
    stored_source: bytes | None = None  # the source compressed, to store (store.source_blob)
    # (content hash, line hash) where ``prepare`` computed them (``hashed``); ``source``
    # is then None when ``stored_source`` gives it back
    hashes: tuple[str, bytes | None] | None = None
    reviewed: bool = False  # ImportItem.reviewed
    rules: tuple = ()  # ImportItem.rules as (label, target, rule) triples

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # rebuilt by tuple.__new__ (C) when unpickled (a batch marshal refuses goes pickled): a NamedTuple's own __new__ and
        # __getnewargs__ are Python calls, one each per record an import worker sends
        return tuple.__new__, (Prepared, tuple(self))


def prepare(item: ImportItem, settings: dict[str, Any], *, hashed: bool = False) -> Prepared:
    """The DB-free part of storing ``item``, under the dataset's ``settings``; with
    ``hashed``, or where its source is packed, its hashes too (else the storing process
    computes them)."""
    (prepared,) = prepare_batch([item], settings, hashed=hashed)
    assert isinstance(prepared, Prepared)
    return prepared


def prepare_batch(
    entries: Iterable[ImportItem | Unchanged | InputError],
    settings: dict[str, Any],
    *,
    hashed: bool = False,
) -> list[Prepared | Unchanged | InputError]:
    """``prepare`` of each record among ``entries`` (lines skipped and errors pass
    through as they are), in their order (see ``Preparing``)."""
    preparing = Preparing(settings, hashed=hashed)
    for entry in entries:
        preparing.add(entry)
    return preparing.take()


class Preparing:
    """Records prepared as they come (``add``), given back in their order by ``take``.

    Each record is prepared as it comes, while what was read of it is still in the
    cache; but the sources are compressed (and hashed) at ``take``, one after another:
    between two records' compressions the rest of a record's preparing pushed zstd's
    tables (~100 KB) out of the cache, and a line compressed that way cost about half as
    much again as one of a run (issue 27: compressing was a fifth of an import worker's
    time). The blobs are the same bytes either way."""

    def __init__(self, settings: dict[str, Any], *, hashed: bool = False) -> None:
        self.settings, self.hashed = settings, hashed
        self._out: list[Any] = []  # entries, and the fields of the records' Prepared
        # (fields, the source to pack, whether it is its own line, zstd level): not the
        # item, whose parsed row would be held for the whole batch
        self._packing: list[tuple[list[Any], bytes | str, bool, int]] = []

    def __len__(self) -> int:
        return len(self._out)

    def add(self, entry: ImportItem | Unchanged | InputError) -> None:
        if isinstance(entry, (InputError, Unchanged)):
            self._out.append(entry)
            return
        fields, line, level = _fields(entry, self.settings)
        if line is not None:
            self._packing.append((fields, line, entry.own_source, level))
        elif self.hashed:
            fields[_HASHES] = hashes(fields[_DATA], entry.source, entry.raw, entry.own_source)
        self._out.append(fields)

    def take(self) -> list[Prepared | Unchanged | InputError]:
        """The entries added since the last ``take``, the records prepared."""
        if self._packing:
            packers: dict[int, Any] = {}
            for fields, line, own_source, level in self._packing:
                raw = line if isinstance(line, bytes) else line.encode()
                pack = packers.get(level) or packers.setdefault(level, source_blob.packer(level))
                fields[_STORED] = pack(raw)
                # (hashed where the text is at hand: a packed source is not sent across
                # whole for the storing process to hash, which cost more than the hash;
                # _item unpacks it should the record need it)
                fields[_HASHES] = hashes(fields[_DATA], None, raw, own_source)
                fields[_SOURCE] = None
        # (tuple.__new__: every field is there, no Python __new__ call per record)
        out = [e if type(e) is not list else tuple.__new__(Prepared, e) for e in self._out]
        self._out, self._packing = [], []
        return out


# where ``_fields`` puts the Prepared's fields that ``Preparing`` fills in
_DATA, _SOURCE = Prepared._fields.index("data"), Prepared._fields.index("source")
_STORED, _HASHES = Prepared._fields.index("stored_source"), Prepared._fields.index("hashes")


def _fields(
    item: ImportItem, settings: dict[str, Any]
) -> tuple[list[Any], bytes | str | None, int]:
    """A ``Prepared``'s fields but its packed source and hashes, the source to pack
    (None where it stays as it is) and the zstd level to pack it at."""
    rec = item.record
    data = dumps(rec.data)
    # the source format of a family whose metrics read the source row (MT-RAG's), and
    # the zstd level its family packs that row at (None: the store's own)
    source_format, level = metrics.source_traits(rec)
    seen = rec
    if source_format is not None and isinstance(item.row, dict) and "source" not in rec.data:
        # its metrics see the row the reader parsed, not a second parse of its text (one
        # more JSON parse per record, issue 27)
        seen = metrics.with_source(rec, item.row)
    values = metric_import_writes.new_record_values(seen, item.judge, item.source, settings)
    line = None
    # (every family's source is packed, MT-RAG's too: its readers unpack it,
    # ``metric_writes._with_source``; at its family's level, where it declares one)
    if item.source is not None:
        line = item.raw if item.raw is not None else item.source
    if level is None:
        level = source_blob.LEVEL
    fields = [
        item.position,
        rec.id,
        rec.task,
        data,
        item.source,
        _label_flat(item.judge),
        _label_flat(item.human) if item.human else (),
        values,
        item.reviewers,
        item.own_source,
        None,
        None,
        item.reviewed,
        tuple((name, target, rule) for (name, target), rule in item.rules.items())
        if item.rules
        else (),
    ]
    return fields, line, level


def hashes(
    data: str, source: str | None, raw: bytes | None, own_source: bool
) -> tuple[str, bytes | None]:
    """(content hash, line hash) of a record: its data's JSON and source text (the bytes
    read where the reader had them, else the text encoded once); the line hash only for
    a record whose source is its own line (``ImportItem.own_source``)."""
    text = raw if raw is not None or source is None else source.encode()
    digest = content_hash(data, text)
    return digest, line_hash(text) if own_source and text is not None else None


def item(prepared: Prepared) -> ImportItem:
    """The ``ImportItem`` back from its prepared form (a record a worker prepared that
    turns out to need the DB: a known id, or human labels)."""
    record = parse_record({"id": prepared.id, **loads(prepared.data)})
    source = prepared.source
    if source is None and prepared.stored_source is not None:
        source = source_blob.unpack(prepared.stored_source)
    return ImportItem(
        prepared.position,
        record,
        _layer(label_rows(prepared.judge)),
        _layer(label_rows(prepared.human)),
        source,
        prepared.reviewers,
        prepared.own_source,
        reviewed=prepared.reviewed,
        rules={(name, target): rule for name, target, rule in prepared.rules},
    )
