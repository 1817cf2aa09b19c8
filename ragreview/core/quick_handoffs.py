"""Threads handing the interpreter to each other sooner, inside a block."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

# (CPython's default is 5 ms; at 10,000 reviewed records under load, 5, 1, 0.5 and 0.2 ms
# gave `agreement --json` median walls of 4.3, 3.5, 3.2 and 2.8 s for the same CPU)
HANDOFF_SECONDS = 0.0002


@contextmanager
def quick_handoffs(seconds: float = HANDOFF_SECONDS) -> Iterator[None]:
    """Inside the block a thread waiting for the interpreter gets it after ``seconds``
    at most (``sys.setswitchinterval``); the previous interval is restored however the
    block ends.

    ``agreement`` counts labels in Python on one thread while others wait in SQLite and
    numpy, which let go of the interpreter: each such call must then wait for the
    counting thread to hand the interpreter back before it can go on. At the default
    5 ms, the bootstrap's few hundred numpy calls spent most of their time waiting (at
    10,000 reviewed records, 1.9 s beside a busy thread for 0.3 s of its own work);
    shorter handoffs let the threads overlap as meant (issue 27).
    """
    before = sys.getswitchinterval()
    sys.setswitchinterval(seconds)
    try:
        yield
    finally:
        sys.setswitchinterval(before)
