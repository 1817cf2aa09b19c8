"""A worker's messages as bytes, and back (``import_pipeline``'s ``_Outbox`` / ``_Inbox``).

Nearly every message is a batch of ``Prepared`` records: tuples of str, bytes, int,
float, bool, None and small tuples and dicts of those. ``marshal`` writes and reads
exactly these types, and for them costs fewer instructions than ``pickle``, which
memoises every object and calls ``Prepared``'s reduction for each record (issue 27:
handing the records over was about 5% of a large import's CPU). A batch's records go
as plain tuples and become ``Prepared`` again through ``tuple.__new__`` (C, no Python
call per record); whatever else is among them (``InputError``, ``Unchanged``) is
pickled beside them with its place, so the entries come back equal and in order.

marshal refuses any other type, subclasses included (a float subclass, an enum), and
never converts one: a batch it refuses is pickled whole, as is every other message.
Both ends are the same interpreter (the worker is spawned from ``sys.executable``), so
marshal's format, which may change between Python versions, is the same at both.
"""

from __future__ import annotations

import marshal
import pickle
from functools import partial
from typing import Any

from ..store.preparing import Prepared

MARSHALLED, PICKLED = b"m", b"p"  # a message's first byte: how the rest is written
_VERSION = 4  # (marshal's refs: a label name or metric name repeated is written once)
_prepared = partial(tuple.__new__, Prepared)  # (no Python __new__ per record)


def encode(message: Any) -> tuple[bytes, bytes]:
    """(its first byte, the rest): ``message`` as ``decode`` takes it back. A batch,
    ("entries", [entry, …], bytes read), is marshalled where it can be."""
    if type(message) is tuple and len(message) == 3 and message[0] == "entries":
        kind, entries, read = message
        rows, others = [], []
        for index, entry in enumerate(entries):
            if type(entry) is Prepared:
                rows.append(tuple(entry))
            else:
                others.append((index, entry))
        # (the others are rare: one pickle for all of a batch's, or none)
        extra = pickle.dumps(others, pickle.HIGHEST_PROTOCOL) if others else None
        try:
            return MARSHALLED, marshal.dumps((kind, read, rows, extra), _VERSION)
        except ValueError:  # a value of a type marshal does not write: pickle keeps it
            pass
    return PICKLED, pickle.dumps(message, pickle.HIGHEST_PROTOCOL)


def decode(head: int, body: Any) -> Any:
    """The message ``encode`` wrote: ``head`` its first byte, ``body`` the rest (any
    bytes-like object, read and done with before this returns)."""
    if head != MARSHALLED[0]:
        return pickle.loads(body)
    kind, read, rows, extra = marshal.loads(body)
    entries: list[Any] = list(map(_prepared, rows))
    if extra is not None:
        for index, entry in pickle.loads(extra):  # (in order: each lands at its place)
            entries.insert(index, entry)
    return kind, entries, read
