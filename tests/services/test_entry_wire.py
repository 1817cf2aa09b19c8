"""A worker's messages come back from their bytes equal, of the same types and in the
same order (services.entry_wire): a batch of prepared records marshalled, the errors
among them in their places, anything marshal refuses pickled instead."""

from __future__ import annotations

import math
import pickle
from pathlib import Path

from ragreview import formats
from ragreview.core.errors import InputError, InputWarning
from ragreview.core.import_items import Unchanged
from ragreview.services import entry_wire
from ragreview.store import preparing
from ragreview.store.preparing import Prepared
from tests.services.test_import_pipeline import DEFAULTS, FACTSCORE, MTRAG, RAGBENCH, with_bad_lines


def round_trip(message: object) -> tuple[bytes, object]:
    head, body = entry_wire.encode(message)
    # (decoded from a view of a larger buffer, as _Inbox reads it)
    buffer = bytearray(body) + b"left over from a larger message"
    with memoryview(buffer) as view, view[: len(body)] as part:
        return head, entry_wire.decode(head[0], part)


def assert_same(got: list, expected: list) -> None:
    """Entries of the same types and values: by repr, which tells NaN and -0.0 apart (NaN
    equals no NaN) and gives an error's text (errors compare by identity)."""
    assert [type(e) for e in got] == [type(e) for e in expected]
    assert [repr(e) for e in got] == [repr(e) for e in expected]


def batch(path: Path) -> list:
    _fmt, stream = formats.read(path)
    return preparing.prepare_batch(stream, DEFAULTS, hashed=True)


def test_a_batch_read_from_a_file_with_bad_lines_comes_back_equal(tmp_path) -> None:
    for source in (RAGBENCH, FACTSCORE, MTRAG):
        entries = batch(with_bad_lines(tmp_path, source))
        assert sum(isinstance(e, InputError) for e in entries) == 2
        head, (kind, got, read) = round_trip(("entries", entries, 1234))
        assert head == entry_wire.MARSHALLED
        assert (kind, read) == ("entries", 1234)
        assert_same(got, entries)
        assert [e for e in got if type(e) is Prepared] == [
            e for e in entries if type(e) is Prepared
        ]


def test_entries_of_every_kind_keep_their_places() -> None:
    (record,) = batch(RAGBENCH)[:1]
    error = InputError("f.jsonl", 3, "id", "bad")
    warning = InputWarning("f.jsonl", 4, None, "odd")
    unchanged = Unchanged(7, 12, "x", moved=True)
    for entries in (
        [error, record, warning, record, unchanged],
        [record, record, error],
        [error, warning],
        [record],
        [],
    ):
        head, (_kind, got, _read) = round_trip(("entries", entries, 0))
        assert head == entry_wire.MARSHALLED
        assert_same(got, entries)
        assert [str(e) for e in got] == [str(e) for e in entries]


def test_values_marshal_must_keep_exactly() -> None:
    (record,) = batch(RAGBENCH)[:1]
    odd = record._replace(
        id="\ud800 lone surrogate, é, 𝄞",
        position=2**70,
        metrics=({"a": math.nan, "b": -0.0, "c": math.inf, "d": None}, {}, (True, 0, 1.5), 3),
        reviewers=(("ann", "relevant", "a", "true"),),
        rules=(("relevant", "a", "r1"),),
        reviewed=True,
    )
    head, (_kind, got, _read) = round_trip(("entries", [odd], 0))
    assert head == entry_wire.MARSHALLED
    assert_same(got, [odd])
    values = got[0].metrics[0]
    assert list(values) == ["a", "b", "c", "d"] and math.copysign(1, values["b"]) == -1
    assert got[0].metrics[2][0] is True and got[0].id == odd.id


class Score(float):
    """A type marshal refuses (it takes no subclass): the batch is pickled instead."""


def test_a_batch_marshal_refuses_is_pickled_whole() -> None:
    (record,) = batch(RAGBENCH)[:1]
    odd = record._replace(metrics=({"a": Score(0.5)}, {}, (), 0))
    head, (_kind, got, _read) = round_trip(("entries", [record, odd], 0))
    assert head == entry_wire.PICKLED
    assert_same(got, [record, odd])
    assert type(got[1].metrics[0]["a"]) is Score


def test_other_messages_are_pickled() -> None:
    for message in (("turn", 3, 10), ("done", None, 0), ("error", InputError("f", 1, "x", "y"), 0)):
        head, got = round_trip(message)
        assert head == entry_wire.PICKLED
        assert repr(got) == repr(message)
    assert pickle.loads(entry_wire.encode(("done", None, 0))[1]) == ("done", None, 0)
