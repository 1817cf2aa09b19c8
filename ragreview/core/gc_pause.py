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
