"""A record's source line stored as it was read, zstd-compressed (issue 27).

``records.source`` holds either text (a source kept whole, or an older import's
compacted line, see ``store.compact``) or a BLOB: the exact bytes of the line,
compressed. The BLOB's type is what says which: a zstd frame is never JSON text.

Compressing the line keeps every JSON style at the same cost (``json.dumps``' spaced
separators and ``\\u`` escapes, pandas' ``\\/``: the line is kept as written, never
rebuilt), makes ``export --as source`` a decompress-and-write of each line, and costs an
import less than finding and cutting the texts the canonical data already holds did.
MT-RAG's source, which its metrics read, is compressed too (an older import kept it as
text; its readers take either: ``store.metric_writes._with_source``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when a source is first packed or unpacked (start-up)
    import zstandard

# zstd's default level: on RAGBench lines it compressed as fast as levels 1 and -5
# (about 200 MB/s on the bench machine) to a fifth of the line (synthetic text; real
# text about a third), and decompressed fastest.
LEVEL = 3  # (a family may pack its lines at another: ``Family.source_level``)

# (one of each per process: creating them is most of the cost of a small line;
# neither is shared between threads: ``pack`` runs in the importing thread or the
# import worker, ``unpack`` in whichever thread reads records, so each gets its own)
_compressors: dict[tuple[int, int], zstandard.ZstdCompressor] = {}  # (thread, level)
_decompressors: dict[int, zstandard.ZstdDecompressor] = {}


def _compressor(level: int = LEVEL) -> zstandard.ZstdCompressor:
    key = (threading.get_ident(), level)
    found = _compressors.get(key)
    if found is None:
        import zstandard

        found = _compressors[key] = zstandard.ZstdCompressor(level=level)
    return found


def _decompressor() -> zstandard.ZstdDecompressor:
    key = threading.get_ident()
    found = _decompressors.get(key)
    if found is None:
        import zstandard

        found = _decompressors[key] = zstandard.ZstdDecompressor()
    return found


def pack(line: str | bytes) -> bytes:
    """The line (text, or the UTF-8 bytes as read; never with its line break, which an
    export writes after it: ``store.source_lines``) compressed."""
    return packer()(line)


def packer(level: int = LEVEL) -> Callable[[str | bytes], bytes]:
    """``pack``, bound to this thread's compressor (at ``level``): for a run of lines
    packed one after another (``store.preparing.Preparing``)."""
    compress = _compressor(level).compress

    def pack_one(line: str | bytes) -> bytes:
        return compress(line.encode() if isinstance(line, str) else line)

    return pack_one


def unpack_bytes(blob: bytes) -> bytes:
    """The line's UTF-8 bytes back, exactly as ``pack`` was given them."""
    return _decompressor().decompress(blob)


def unpack_many(
    blobs: list[bytes], decompressor: zstandard.ZstdDecompressor | None = None, threads: int = 2
) -> list[bytes]:
    """``unpack_bytes`` of each, in one call that decompresses on ``threads`` threads
    outside the GIL (an export's page of records: decompressing was most of what an
    export does beyond the floor's read and write). Bytes, not text: an export writes
    them as they are, and decoding them only to encode them again cost it a fifth of its
    time. ``decompressor``: one the calling thread owns (``Unpacking``'s), else this
    thread's."""
    return [bytes(line) for line in unpack_lines(blobs, decompressor, threads)]


def unpack_lines(
    blobs: list[bytes], decompressor: zstandard.ZstdDecompressor | None = None, threads: int = 0
) -> list[Any]:
    """``unpack_bytes`` of each, as views into one buffer that zstd decompressed them
    into in one call (``BufferSegment``s: bytes-like, for ``bytes.join`` or a write):
    no bytes object per line, and no copy of the lines before they are written.
    ``decompressor`` and ``threads`` as ``unpack_many``'s (0: on the calling thread).

    For a few lines at a time (``store.source_lines``: a write's worth, ~100 KB): the
    buffer then comes from memory freed by the write before, still in the cache. One
    buffer per page of 500 lines (~5 MB) was freshly mapped memory each time, its
    page faults a third as much again as the decompression (issue 27)."""
    found_decompressor = decompressor or _decompressor()
    if len(blobs) < 2:
        return [found_decompressor.decompress(blob) for blob in blobs]
    frames: list[bytes | bytearray | memoryview] = list(blobs)  # (the stubs' element type)
    found = found_decompressor.multi_decompress_to_buffer(frames, threads=threads)
    return [found[i] for i in range(len(found))]


class Unpacking:
    """``unpack_many`` on a thread of its own: an export hands it the next page's
    sources and writes the page it has meanwhile, so decompressing (half of an
    export's instructions) runs beside the reading and writing instead of between
    them (issue 27: wall time against the minimal script). Outside the GIL, like the
    writes and SQLite's reads, so two cores are both used. Close it (``with``)."""

    def __init__(self) -> None:
        from concurrent.futures import ThreadPoolExecutor  # (only an export needs it)

        import zstandard

        self._pool = ThreadPoolExecutor(1, thread_name_prefix="ragreview-unpack")
        self._decompressor = zstandard.ZstdDecompressor()  # the pool's thread's alone

    def start(self, blobs: list[bytes]) -> Callable[[], list[bytes]]:
        """Begin decompressing ``blobs``; the returned call waits for their lines.

        On this one thread: the export's own thread (reading, building records,
        writing) takes about as long (0.6 s CPU against 0.55 s at 20,000 RAGBench
        rows), so a second decompressing thread would only take the core it runs on
        (and start two threads a page)."""
        return self._pool.submit(unpack_many, blobs, self._decompressor, 1).result

    def __enter__(self) -> Unpacking:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def unpack(blob: bytes) -> str:
    """The line's text back, exactly."""
    return unpack_bytes(blob).decode()


SQL_FUNCTION = "ragreview_source"  # text(records.source) in SQL (store.record_filter)


def text(stored: str | bytes | None) -> str | None:
    """A stored ``records.source`` as text, whichever way it was stored (an older
    import's compacted line comes back as its stored rest, which is no JSON:
    ``store.compact`` rebuilds it from the data). Registered on every connection as
    ``ragreview_source(source)`` so that SQL reads a compressed source's fields."""
    if isinstance(stored, bytes):
        try:
            return unpack(stored)
        except Exception:  # noqa: BLE001 (not ours: a BLOB some other tool wrote)
            return None
    return stored
