"""Taking the next item of a lazy sequence before giving the one before: where taking
an item begins work on another thread (a page's read, its sources' decompression), that
work runs while the caller uses the item before (``store.read_ahead``,
``store.records.iterate``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def one_ahead(started: Iterable[T]) -> Iterator[T]:
    """``started``'s items, each given once the next has been taken from it: with a
    generator that begins a page's read as it gives it (``ReadAhead.start``,
    ``source_blob.Unpacking.start``), the next page is under way while the caller
    waits for and works on this one."""
    held: list[T] = []  # the item taken before, until the next is taken
    for item in started:
        yield from held
        held = [item]
    yield from held
