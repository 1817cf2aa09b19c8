"""Preparing a large file's records in a worker process while this one stores them.

Reading, parsing, validating and computing the metrics of each record
(``store.preparing``) is about two thirds of an import; SQLite's inserts are the
rest. For a large file a worker process (multiprocessing, spawn) reads and prepares
the records and sends them here in batches (``entry_wire``), so the two halves run on two
cores. The records arrive in file order with the per-record errors among them, exactly
as ``formats.read`` gives them; the worker never touches the database.

A RAGBench parquet file gets two workers: turning its rows into Python objects costs
more than parsing the same rows as JSON Lines, and its record batches can be shared
(``formats.base.Share``), each worker converting every other batch while this
process takes them in turn.
"""

from __future__ import annotations

import gc
import io
import multiprocessing
import os
import queue
import signal
import struct
import threading
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from .. import formats
from ..core.errors import InputError, RagreviewError
from ..core.import_items import Unchanged
from ..formats import parquet
from ..formats.base import ReadContext, Share
from ..store.preparing import Prepared, Preparing
from . import entry_wire

PARALLEL_MIN_BYTES = 32 * 2**20  # smaller files import faster than a worker starts
BATCH = 100  # records per message (~2 MB of RAGBench rows)
# Messages received ahead of the importer: a little more than the importer takes in one
# burst (store.importer.METRIC_BATCH records), so that the worker goes on preparing
# while a batch is stored. Each is ~2 MB, held in a buffer kept for reuse (_Inbox): 32
# of them were 70 MiB of the parent's peak whenever the worker ran ahead (issue 27).
AHEAD = 12
# A multiprocessing Connection is a file descriptor on POSIX (read and written directly,
# into reused buffers); on Windows it is a pipe handle, used through its own methods.
FD_PIPES = os.name == "posix"
_HEADER = struct.Struct("!Qc")  # a message's length and first byte (entry_wire), before the rest
NICE = 5  # the priority a worker gives up when workers share a file (see _work)

Entry = Prepared | Unchanged | InputError  # (no line is skipped here: see importing)


def worth_it(path: Path) -> bool:
    """A large file, and a second core to prepare it on (with one, the worker would
    only add the cost of sending every record across)."""
    try:
        large = path.stat().st_size >= PARALLEL_MIN_BYTES
    except OSError:
        return False
    return large and _cores() >= 2


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # (the cores this process may run on)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def prepared(
    path: Path,
    fmt: str,
    settings: dict[str, Any],
    on_bytes: Callable[[int], None] | None = None,
) -> Iterator[Entry]:
    """``formats.read(path, fmt)``'s entries, each record prepared under ``settings``,
    computed by worker processes. ``on_bytes(n)`` is told as the workers read."""
    context = multiprocessing.get_context("spawn")  # no fork of a process holding SQLite
    n = _shares(path, fmt)
    workers, inboxes = [], []
    try:
        for k in range(n):
            receiver, sender = context.Pipe(duplex=False)
            worker = context.Process(
                target=_work,
                args=(sender, str(path), fmt, settings, (k, n) if n > 1 else None),
                name=f"ragreview-import-{k}",
            )
            worker.start()
            sender.close()  # ours; the worker holds its own copy
            workers.append(worker)
            inboxes.append(_Inbox(receiver, AHEAD // n))
        turn = 0  # the batch whose entries come next: worker turn % n has it
        while True:
            inbox, worker = inboxes[turn % n], workers[turn % n]
            message = inbox.get()
            if message is None:
                worker.join()
                raise RagreviewError(
                    f"{path}: the import worker stopped (exit code {worker.exitcode})"
                )
            kind, payload, read = message
            if on_bytes is not None and read:
                on_bytes(read)
            if kind == "entries":
                yield from payload
            elif kind == "turn":
                turn += 1
            elif kind == "error":
                raise payload
            else:  # done: no batch is left (the others' are all taken)
                return
    finally:
        for worker in workers:
            if worker.is_alive():  # stopped early (an error here, or Ctrl-C), or done
                worker.terminate()
            worker.join()
        for inbox in inboxes:
            inbox.close()  # the worker is gone: its end of the pipe is closed


def _shares(path: Path, fmt: str) -> int:
    """How many workers convert the file's rows: two for a parquet file of a format
    whose rows stand alone (``Traits.rows_stand_alone``: RAGBench's; a row's conversion
    into Python objects costs about twice a JSON line's parse, and the batches can be
    shared), else one. A repeated id keeps one: the warning about it names the line it
    first came on, which one reader sees."""
    adapter = formats.REGISTRY.get(fmt)  # (an unknown one: the worker's read says so)
    if adapter is None or not adapter.TRAITS.rows_stand_alone:
        return 1
    if path.is_dir() or not parquet.is_table(path):
        return 1
    ids = parquet.count_ids(path, "id")
    return 1 if any(count > 1 for count in ids.values()) else 2


class _Inbox:
    """Messages from the worker, received by a thread of their own.

    The importer takes records in bursts and then stores them for a while; without a
    buffer the worker would wait through every store for its next message to be taken
    (a pipe holds 64 KiB), and the two processes would take turns instead of working
    at once. Receiving waits outside the GIL.

    Each message (~2 MB) is read into one of a few buffers that are used again, not
    into a new bytes object: glibc serves blocks that size from the heap once one has
    been freed, and a new one per message left the heap fragmented, so that this
    process kept growing with the file's size (issue 27: 284 MiB at 300,000 records).
    ``Connection.recv_bytes_into`` would not help: it reads into a new BytesIO first.
    """

    def __init__(self, receiver: Connection, ahead: int = AHEAD, fd_pipes: bool = FD_PIPES) -> None:
        self._receiver = receiver
        # (where a Connection is no file descriptor, its own framing: one new bytes each)
        self._pipe = io.FileIO(receiver.fileno(), "rb", closefd=False) if fd_pipes else None
        # (a message's first byte, its buffer and the length of the rest in it)
        self._messages: queue.Queue[tuple[int, bytearray, int] | None] = queue.Queue(maxsize=ahead)
        self._free: queue.SimpleQueue[bytearray] = queue.SimpleQueue()  # buffers to reuse
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._receive, name="ragreview-inbox", daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        message: tuple[int, bytearray, int] | None
        while True:
            try:
                message = self._read()
            except OSError:  # (we closed the pipe)
                message = None
            while not self._closed.is_set():
                try:
                    self._messages.put(message, timeout=0.1)
                    break
                except queue.Full:
                    continue
            if message is None or self._closed.is_set():
                return

    def _read(self) -> tuple[int, bytearray, int] | None:
        """The next message: its first byte, the rest in a reused buffer, and the length
        of the rest; None at the end."""
        if self._pipe is None:
            try:
                data = self._receiver.recv_bytes()
            except EOFError:
                return None
            return data[0], bytearray(data[1:]), len(data) - 1
        header = bytearray(_HEADER.size)
        if not self._fill(header, len(header)):
            return None
        size, head = _HEADER.unpack(header)
        try:
            buffer = self._free.get_nowait()
        except queue.Empty:
            buffer = bytearray(size)
        if len(buffer) < size:  # grown, never shrunk: the next ones are about as large
            buffer.extend(bytes(size - len(buffer)))
        return (head[0], buffer, size) if self._fill(buffer, size) else None

    def _fill(self, buffer: bytearray, size: int) -> bool:
        """Read ``size`` bytes into the start of ``buffer``; False at the end of the pipe."""
        assert self._pipe is not None
        got = 0
        with memoryview(buffer) as view:
            while got < size:
                n = self._pipe.readinto(view[got:size])
                if not n:
                    return False
                got += n
        return True

    def get(self) -> Any:
        """The next message, decoded; None once the worker has closed its end."""
        message = self._messages.get()
        if message is None:
            return None
        head, buffer, size = message
        with memoryview(buffer) as view, view[:size] as body:
            loaded = entry_wire.decode(head, body)
        self._free.put(buffer)
        return loaded

    def close(self) -> None:
        """Stop receiving; call once the worker has exited (the thread then sees EOF)."""
        self._closed.set()
        self._thread.join()
        if self._pipe is not None:
            self._pipe.close()
        self._receiver.close()


def _work(
    sender: Connection,
    path: str,
    fmt: str,
    settings: dict[str, Any],
    share: tuple[int, int] | None = None,
) -> None:
    """The worker: read, prepare, send. Everything it raises goes to the parent. With
    ``share`` (k, n) it prepares every n-th batch of a parquet file's rows from the k-th
    and marks where each ends, so that the parent takes the workers' batches in turn."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    gc.disable()  # as in the importer: no cycles, and the collector would cost a fifth
    shared = share is not None
    if shared:
        # more processes than cores: when the parent has records to store it goes
        # first (the workers' batches queue up meanwhile)
        os.nice(NICE)
    read = 0
    # (errors and warnings alike pass through as they are; two workers have spare time
    # for the hashes)
    batch = Preparing(settings, hashed=shared)
    outbox = _Outbox(sender)

    def send(kind: str, payload: Any) -> None:
        nonlocal read
        outbox.send((kind, payload, read))
        read = 0

    def count(n: int) -> None:
        nonlocal read
        read += n

    def send_batch() -> None:
        send("entries", batch.take())

    def turn(index: int) -> None:  # the rows of batch ``index`` are all in ``batch``
        send_batch()
        send("turn", index)

    try:
        ctx = ReadContext(on_bytes=count, share=None if share is None else Share(*share, turn))
        # (its peek at the head is not progress: only the records read under ctx are)
        _fmt, stream = formats.read(Path(path), fmt, ctx=ctx)
        for entry in stream:
            batch.add(entry)
            if len(batch) >= BATCH:
                send_batch()
        send_batch()
        send("done", None)
    except BaseException as err:
        if not isinstance(err, RagreviewError):  # a bug: its traceback, as text
            import traceback

            err = RuntimeError("".join(traceback.format_exception(err)))
        try:
            send("error", err)
        except OSError:  # the parent stopped listening (it stopped us)
            pass
    finally:
        sender.close()


class _Outbox:
    """Messages to the parent's ``_Inbox``, encoded (``entry_wire``) and written after
    their length and first byte."""

    def __init__(self, sender: Connection, fd_pipes: bool = FD_PIPES) -> None:
        self._sender = sender
        # (the fd is sender's; where a Connection is no file descriptor, its own framing)
        self._pipe = io.FileIO(sender.fileno(), "wb", closefd=False) if fd_pipes else None

    def send(self, message: Any) -> None:
        head, body = entry_wire.encode(message)
        if self._pipe is None:
            self._sender.send_bytes(head + body)
            return
        self._write(_HEADER.pack(len(body), head))
        self._write(body)

    def _write(self, data: bytes | memoryview) -> None:
        """All of ``data`` (a pipe takes 64 KiB at a time)."""
        assert self._pipe is not None
        with memoryview(data) as view:
            sent = 0
            while sent < len(view):
                sent += self._pipe.write(view[sent:]) or 0
