"""Writing runs of source lines, each followed by a line break (``export --as source``'s
records nobody overrode, ``store.source_lines``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TextIO

from ..formats.line_writer import byte_writer

NL = b"\n"


def lines_writer(out: TextIO) -> Callable[[list[Any]], None]:
    """A call that writes a list of lines (bytes-like, without their line break) to
    ``out``, each followed by ``b"\\n"``, as ``formats.line_writer.write_lines`` writes them.

    To a file with a descriptor (the export's own, standard output) in one ``writev``
    from the lines where they are: zstd's buffer (``source_blob.unpack_lines``). Joining
    them first copied every byte of the export once more before the kernel's own copy.
    Elsewhere (a text stream without one, one that is not UTF-8) joined, through
    ``byte_writer``. The caller flushes ``out`` after writing anything else to it."""
    write = byte_writer(out)
    fd: int | None = None
    # (``byte_writer`` gives the binary buffer's own write when the bytes may go there)
    buffer = getattr(out, "buffer", None)
    if buffer is not None and getattr(write, "__self__", None) is buffer:
        try:
            fd = out.buffer.fileno()
        except (AttributeError, OSError, ValueError):  # (io.UnsupportedOperation is both)
            fd = None
    if fd is None:

        def joined(lines: list[Any]) -> None:
            write(NL.join([*lines, b""]))

        return joined

    def gathered(lines: list[Any]) -> None:
        parts = [part for line in lines for part in (line, NL)]
        done = os.writev(fd, parts)
        total = sum(map(len, lines)) + len(lines)
        if done < total:  # a short write (a pipe, a signal): the rest, joined
            rest = memoryview(b"".join(parts))[done:]
            while rest:
                rest = rest[os.write(fd, rest) :]

    return gathered
