"""The worker's messages cross the pipe whole, however their sizes vary, through the
parent's reused receive buffers (import_pipeline._Inbox, issue 27's peak memory)."""

from __future__ import annotations

import multiprocessing
import threading

import pytest

from ragreview.services.import_pipeline import _Inbox, _Outbox


# fd: POSIX, the pipe read and written directly; connection: the Connection's own
# framing, as on Windows (where a Connection is no file descriptor)
@pytest.mark.parametrize("fd_pipes", [True, False], ids=["fd", "connection"])
def test_messages_of_any_size_arrive_whole_and_in_order(fd_pipes: bool) -> None:
    receiver, sender = multiprocessing.Pipe(duplex=False)
    # (a large one, then smaller ones into the same buffers, then one larger than all)
    messages = [
        ("a", "x" * 3_000_000),
        ("b", b"\0" * 10),
        ("c", list(range(50_000))),
        ("d", "é" * 5_000_000),
    ]
    inbox = _Inbox(receiver, ahead=2, fd_pipes=fd_pipes)

    def write() -> None:
        outbox = _Outbox(sender, fd_pipes=fd_pipes)
        for message in messages:
            outbox.send(message)
        sender.close()

    writer = threading.Thread(target=write)
    writer.start()
    got = [inbox.get() for _ in messages]
    assert inbox.get() is None  # the end of the pipe
    writer.join()
    inbox.close()
    assert got == messages


def test_buffers_are_used_again() -> None:
    """Taken one at a time, twenty messages go through one or two buffers, not twenty."""
    receiver, sender = multiprocessing.Pipe(duplex=False)
    inbox = _Inbox(receiver, ahead=1)
    outbox = _Outbox(sender)
    for k in range(20):
        outbox.send(("entries", "y" * (100_000 + k)))
        assert inbox.get() == ("entries", "y" * (100_000 + k))
    sender.close()
    assert inbox.get() is None
    inbox.close()
    assert inbox._free.qsize() <= 2
