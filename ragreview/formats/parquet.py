"""Rows stored as Apache Parquet, or as a Hugging Face ``datasets.save_to_disk``
directory (Arrow stream files listed in ``state.json``), read like JSON Lines.

Any row format (RAGBench's HF parquet files, and the rows of every other line format)
is read through the same adapters: each row becomes the JSON object, and the JSON text,
that a JSON Lines file would have given at that line (row numbers count from 1). The
files are read in record batches, so memory does not grow with the file. ``pyarrow`` is
imported only here, only when such a file is read or written (the ``parquet`` extra).

Writing (``export --as parquet``) stores the rows the source format's writer produces,
one column per field in first-seen order, each column's type inferred over all rows.
A field whose values have no common Arrow type (a string in one row, a list in another)
is stored as JSON text and named in the file's metadata, so reading gives it back.
"""

from __future__ import annotations

import datetime
import decimal
import json
import queue
import sys
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from ..core.errors import InputError
from .base import Share

NAME = "parquet"  # an export target (``export --as parquet``); read as rows
MAGIC = b"PAR1"
BATCH_ROWS = 1_000  # rows per row group written
# Rows per batch read. A batch becomes Python objects all at once (``to_pylist``):
# 256 RAGBench rows (~3 MB of text) stay in the CPU's caches, 1,000 do not, and
# reading takes a third longer and more memory (measured: bench/parquet_bench.py).
READ_ROWS = 256
PREFETCH = 2  # batches decoded ahead of the one being converted
READ_BUFFER = 1 << 20  # bytes of a column chunk read at a time
JSON_COLUMNS_KEY = b"ragreview.json_columns"
# Parquet has no "absent": a row without a field reads back null. When the rows do not
# all have the same fields, this column lists each row's absent ones.
ABSENT_COLUMN = "_ragreview_absent"
ABSENT_KEY = b"ragreview.absent_column"


def is_table(path: Path) -> bool:
    """A parquet file (by its magic bytes) or a ``save_to_disk`` directory."""
    if path.is_dir():
        return (path / "state.json").is_file() or (path / "dataset_dict.json").is_file()
    try:
        with path.open("rb") as fh:
            return fh.read(4) == MAGIC
    except OSError:
        return False


def _pyarrow(path: Path | str) -> Any:
    try:
        import pyarrow
    except ImportError:
        raise InputError(
            str(path), None, None, "parquet needs pyarrow: pip install 'ragreview[parquet]'"
        ) from None
    return pyarrow


def _arrow_files(path: Path) -> list[Path]:
    """The Arrow files of a ``save_to_disk`` directory, in order."""
    if (path / "dataset_dict.json").is_file() and not (path / "state.json").is_file():
        splits = json.loads((path / "dataset_dict.json").read_text()).get("splits") or []
        raise InputError(
            str(path),
            None,
            None,
            f"a DatasetDict: open one split's directory ({', '.join(map(str, splits))})",
        )
    try:
        state = json.loads((path / "state.json").read_text())
        names = [f["filename"] for f in state["_data_files"]]
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(
            str(path / "state.json"), None, None, "not a datasets state file"
        ) from None
    return [path / name for name in names]


def _batches(path: Path, columns: list[str] | None = None) -> Iterator[Any]:
    """The file's record batches (only ``columns`` when given)."""
    pa = _pyarrow(path)
    try:
        if path.is_dir():
            for file in _arrow_files(path):
                with pa.memory_map(str(file)) as source:
                    try:
                        reader = pa.ipc.open_stream(source)
                    except pa.ArrowInvalid:
                        reader = pa.ipc.open_file(source)
                        yield from (reader.get_batch(i) for i in range(reader.num_record_batches))
                        continue
                    for batch in reader:
                        yield (
                            batch
                            if columns is None
                            else batch.select([c for c in columns if c in batch.schema.names])
                        )
            return
        import pyarrow.parquet as pq

        # Read a column chunk a megabyte at a time, and keep nothing once decoded: with
        # pre-buffering Arrow keeps every row group's bytes until the file is closed
        # (a 100,000-row file grew a reader by 250 MB), and whole chunks are tens of MB.
        parquet = pq.ParquetFile(str(path), pre_buffer=False, buffer_size=READ_BUFFER)
        names = parquet.schema_arrow.names
        wanted = None if columns is None else [c for c in columns if c in names]
        # (no Arrow threads: the import runs a process per core already)
        yield from parquet.iter_batches(batch_size=READ_ROWS, columns=wanted, use_threads=False)
    except (OSError, pa.ArrowException) as err:
        raise InputError(str(path), None, None, f"cannot read as parquet/Arrow: {err}") from None


def _json_columns(schema: Any) -> set[str]:
    meta = schema.metadata or {}
    raw = meta.get(JSON_COLUMNS_KEY)
    return set(json.loads(raw)) if raw else set()


def _absent_column(schema: Any) -> str | None:
    meta = schema.metadata or {}
    raw = meta.get(ABSENT_KEY)
    return raw.decode() if raw else None


def _default(value: Any) -> Any:
    """JSON for the Arrow values JSON has no type for."""
    if isinstance(value, (datetime.date, datetime.time, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    raise TypeError(type(value).__name__)


class Skipped(NamedTuple):
    """Rows another process reads (see ``base.Share``): only counted, so that the rows after
    them keep their numbers."""

    rows: int


def rows(path: Path, shared: Share | None = None) -> Iterator[tuple[int, str, Any, bytes | None]]:
    """(row number, the row's JSON text, the row as JSON values, that text's UTF-8
    bytes) for each row: what ``jsonio.iter_lines_raw`` gives for a JSON Lines file.

    With ``shared`` (``base.Share``) only this process's batches are converted: ``n``
    processes then convert a file's batches between them (``services.import_pipeline``).
    Each still decodes every batch (Arrow's decode, outside the GIL, is a third of a
    row's conversion; sharing row groups instead would hold a whole group ahead of the
    importer)."""
    number = 0
    for index, batch in enumerate(_prefetched(_batches(path))):
        if shared is not None and index % shared.n != shared.k:
            number += batch.num_rows
            yield number, "", Skipped(batch.num_rows), None
            continue
        encoded = _json_columns(batch.schema)
        absent = _absent_column(batch.schema)
        # Where every value is already what JSON gives back (strings, numbers other
        # than NaN and infinities, lists, objects) the row itself is the parsed line;
        # otherwise it goes through its JSON text like a JSON Lines line would.
        plain = not encoded and _plain(batch)
        for row in batch.to_pylist():
            number += 1
            if absent is not None:
                for name in row.pop(absent, None) or ():
                    row.pop(name, None)
            for name in encoded:
                if isinstance(row.get(name), str):
                    row[name] = json.loads(row[name])
            try:
                raw = orjson.dumps(row, default=_default)
            except TypeError as err:
                error = InputError(str(path), number, None, f"cannot read row: {err}")
                yield number, "", error, None
                continue
            yield number, raw.decode(), row if plain else orjson.loads(raw), raw
        if shared is not None:
            shared.done(index)


def _plain(batch: Any) -> bool:
    """Whether ``batch.to_pylist()`` gives exactly what a JSON parser would."""
    import pyarrow.compute as pc

    def plain(array: Any) -> bool:
        t = array.type
        if pa.types.is_dictionary(t):
            return plain(array.dictionary)
        if pa.types.is_floating(t):  # NaN and infinities are written as null
            return not pc.any(pc.invert(pc.is_finite(array))).as_py()
        if pa.types.is_struct(t):
            return all(plain(array.field(i)) for i in range(t.num_fields))
        if _is_list(pa, t):
            return plain(array.flatten())
        return (
            pa.types.is_string(t)
            or pa.types.is_large_string(t)
            or pa.types.is_string_view(t)
            or pa.types.is_integer(t)
            or pa.types.is_boolean(t)
            or pa.types.is_null(t)
        )

    pa = _pyarrow("")
    return all(plain(column) for column in batch.columns)


def _is_list(pa: Any, t: Any) -> bool:
    return (
        pa.types.is_list(t)
        or pa.types.is_large_list(t)
        or pa.types.is_fixed_size_list(t)
        or pa.types.is_list_view(t)
        or pa.types.is_large_list_view(t)
    )


def _prefetched(batches: Iterator[Any]) -> Iterator[Any]:
    """``batches``, each read ahead by a thread of its own while the rows before it are
    converted: Arrow decodes outside the GIL, so decoding and converting overlap.
    At most ``PREFETCH`` batches wait (memory does not grow with the file)."""
    ahead: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=PREFETCH)
    stop = threading.Event()

    def read() -> None:
        try:
            for batch in batches:
                if not _put(ahead, ("batch", batch), stop):
                    return
            _put(ahead, ("end", None), stop)
        except BaseException as err:  # noqa: BLE001 (handed to the reading thread)
            _put(ahead, ("error", err), stop)

    reader = threading.Thread(target=read, name="ragreview-parquet", daemon=True)
    reader.start()
    try:
        while True:
            kind, value = ahead.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:  # also when the caller stops early (the first row alone, for sniffing)
        stop.set()
        reader.join()
        _release()


def _put(ahead: queue.Queue[tuple[str, Any]], item: tuple[str, Any], stop: threading.Event) -> bool:
    while not stop.is_set():
        try:
            ahead.put(item, timeout=0.05)
            return True
        except queue.Full:
            continue
    return False


def first_row(path: Path) -> str | None:
    for _number, line, _obj, _raw in rows(path):
        return line
    return None


def text(path: Path) -> str:
    """The rows as JSON Lines text (for readers that take a whole file's text)."""
    out = "\n".join(line for _n, line, _obj, _raw in rows(path))
    if not out:
        raise InputError(str(path), None, None, "file is empty")
    return out


def count_ids(path: Path, field: str) -> Counter[str]:
    """Every row's ``field`` (read alone), counted: ``id_pass.leading_ids`` for tables."""
    counts: Counter[str] = Counter()
    for batch in _batches(path, [field]):
        if field not in batch.schema.names:
            break
        for value in batch.column(field).to_pylist():
            if value is not None:
                counts[str(value)] += 1
    _release()
    return counts


def _release() -> None:
    """Hand the memory Arrow freed back to the system: its allocator keeps it otherwise,
    and the importing process, which only sniffs the file and counts its ids, would
    hold the decoded batches' worth (about 50 MB) for the whole import."""
    pa = sys.modules.get("pyarrow")
    if pa is not None:  # (none: the read failed for want of it)
        pa.default_memory_pool().release_unused()


# -- writing ------------------------------------------------------------------------------


def _chunks(lines: Iterable[str]) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for line in lines:
        if line.strip():
            chunk.append(json.loads(line))
        if len(chunk) == BATCH_ROWS:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _schema(pa: Any, lines_path: Path) -> tuple[Any, set[str]]:
    """One pass over the rows: every field in first-seen order with the Arrow type its
    values take, where that type gives every value back exactly (an object whose keys
    vary from row to row, or ints in one batch and floats in another, would not: such
    a field is stored as JSON text)."""
    types: dict[str, Any] = {}
    as_json: set[str] = set()
    first_keys: list[str] | None = None
    uneven = False  # some row lacks a field another has
    with lines_path.open(encoding="utf-8") as fh:
        for chunk in _chunks(fh):
            for row in chunk:
                first_keys = list(row) if first_keys is None else first_keys
                uneven = uneven or set(row) != set(first_keys)
            for name in dict.fromkeys(k for row in chunk for k in row):
                if name in as_json:
                    continue
                values = [row.get(name) for row in chunk]
                try:
                    array = pa.array(values)
                except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
                    as_json.add(name)
                    continue
                known = types.get(name)
                exact = orjson.dumps(array.to_pylist()) == orjson.dumps(values)
                if not exact or (
                    known is not None
                    and known != array.type
                    and not pa.types.is_null(known)
                    and not pa.types.is_null(array.type)
                ):
                    as_json.add(name)
                elif known is None or pa.types.is_null(known):
                    types[name] = array.type
    fields = [(n, pa.string() if n in as_json else t) for n, t in types.items()]
    fields += [(n, pa.string()) for n in as_json if n not in types]
    meta = {}
    if as_json:
        meta[JSON_COLUMNS_KEY] = json.dumps(sorted(as_json)).encode()
    if uneven:
        fields.append((ABSENT_COLUMN, pa.list_(pa.string())))
        meta[ABSENT_KEY] = ABSENT_COLUMN.encode()
    return pa.schema(fields, metadata=meta or None), as_json


def write(lines_path: Path, out: Path) -> int:
    """Write the JSON Lines rows of ``lines_path`` to the parquet file ``out``; the count."""
    pa = _pyarrow(out)
    import pyarrow.parquet as pq

    schema, as_json = _schema(pa, lines_path)
    count = 0
    with pq.ParquetWriter(str(out), schema) as writer, lines_path.open(encoding="utf-8") as fh:
        for chunk in _chunks(fh):
            columns = []
            for field in schema:
                if field.name == ABSENT_COLUMN and _absent_column(schema) == ABSENT_COLUMN:
                    names = [f.name for f in schema if f.name != ABSENT_COLUMN]
                    absent = [[n for n in names if n not in row] or None for row in chunk]
                    columns.append(pa.array(absent, type=field.type))
                    continue
                values: list[Any] = [row.get(field.name) for row in chunk]
                if field.name in as_json:
                    values = [
                        None if v is None else json.dumps(v, ensure_ascii=False) for v in values
                    ]
                columns.append(pa.array(values, type=field.type))
            writer.write_table(pa.Table.from_arrays(columns, schema=schema))
            count += len(chunk)
    return count
