"""Pausing Python's cyclic garbage collector while records stream past."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block.

    Streaming many records (an import, the agreement report) creates trees of new
    containers that outlive a young collection (a page or batch is held until it is
    done with), so the collector keeps rescanning a growing old generation: a fifth of
    an import's time, a tenth of the report's. Neither creates reference cycles
    (reference counting frees each page or batch), so nothing piles up; the collector's
    previous state is restored however the block ends.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


_skipping_final_collection = False


def skip_final_collection() -> None:
    """Let the process end without the collector's last pass over every object.

    As Python shuts down it collects all that is left; after ``agreement`` that is
    numpy's and the report's modules and objects, and the pass was ~0.1 s of the
    command (issue 27: 0.11-0.16 s from the last line to the exit, 0.03-0.04 s with
    this). Freezing them (``gc.freeze``) at exit, before that pass, leaves it nothing
    to walk. Nothing is lost: the command's files are written and closed before it
    returns, and Python still flushes stdout and stderr as it exits. It runs
    at exit, so a process that calls the command and goes on (a test) collects as
    before until then; registered once."""
    global _skipping_final_collection
    if not _skipping_final_collection:
        import atexit

        atexit.register(gc.freeze)
        _skipping_final_collection = True
