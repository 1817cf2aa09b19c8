"""Leases (migration m007_serve_leases): who holds which record, lapsing when idle."""

from __future__ import annotations

from ragreview.core.import_items import ImportItem
from ragreview.core.record import parse_record
from ragreview.store import history, importer, leases, memory_database
from ragreview.store import records as store_records


def _items(n: int) -> list[ImportItem]:
    return [
        ImportItem(i, parse_record({"id": f"r{i}", "documents": [], "response": [["a", "x"]]}), {})
        for i in range(1, n + 1)
    ]


def _db(n: int = 4):
    db = memory_database()
    importer.import_records(db, "d", "ragreview", None, _items(n))
    return db, [store_records.find(db, f"r{i}").rowid for i in range(1, n + 1)]


def test_a_leased_record_is_refused_to_others_until_it_lapses() -> None:
    db, (r1, r2, *_) = _db()
    assert leases.take(db, r1, "ann", "s-ann", now=100.0, ttl=60) is None
    held = leases.take(db, r1, "bob", "s-bob", now=110.0, ttl=60)
    assert held is not None and (held.reviewer, held.session) == ("ann", "s-ann")
    assert leases.held_by_others(db, "d", "s-bob", now=110.0) == {r1: "ann"}
    assert leases.held_by_others(db, "d", "s-ann", now=110.0) == {}
    # idle past the lease: bob gets it
    assert leases.take(db, r1, "bob", "s-bob", now=161.0, ttl=60) is None
    assert leases.held_by_others(db, "d", "s-ann", now=161.0) == {r1: "bob"}
    # a session holds one lease: opening another record frees the first
    assert leases.take(db, r2, "bob", "s-bob", now=162.0, ttl=60) is None
    assert leases.held_by_others(db, "d", "s-ann", now=162.0) == {r2: "bob"}


def test_renew_keeps_the_lease_and_release_frees_it() -> None:
    db, (r1, *_) = _db()
    leases.take(db, r1, "ann", "s-ann", now=0.0, ttl=60)
    assert leases.renew(db, "s-ann", now=50.0, ttl=60)
    assert leases.held_by_others(db, "d", "s-bob", now=100.0) == {r1: "ann"}
    assert not leases.renew(db, "s-nobody", now=100.0)
    leases.release(db, "s-ann")
    assert leases.held_by_others(db, "d", "s-bob", now=100.0) == {}


def test_first_unreviewed_skips_reviewed_and_leased_records() -> None:
    db, (r1, r2, r3, r4) = _db()
    history.mark(db, r1, "reviewed", "ann", "s-ann")
    assert leases.take_first_unreviewed(db, "d", "ann", "s-ann", now=0.0) == r2
    assert leases.take_first_unreviewed(db, "d", "bob", "s-bob", now=0.0) == r3
    # asking again moves one's own lease on only when the record is taken by others
    assert leases.take_first_unreviewed(db, "d", "ann", "s-ann", now=0.0) == r2
    assert leases.take_first_unreviewed(db, "d", "cy", "s-cy", now=0.0) == r4
    assert leases.take_first_unreviewed(db, "d", "dee", "s-dee", now=0.0) is None
    assert db.conn.execute("SELECT count(*) FROM events WHERE kind != 'status'").fetchone() == (0,)


def test_release_dead_frees_only_this_machines_sessions_whose_process_is_gone() -> None:
    import socket

    db, (r1, r2, r3, r4) = _db()
    dead, alive = leases.process_session(pid=111), leases.process_session(pid=222)
    assert dead.startswith(f"{socket.gethostname()}/111/")
    leases.take(db, r1, "ann", dead)
    leases.take(db, r2, "bob", alive)
    leases.take(db, r3, "cy", "elsewhere.example/111/abcd")  # another machine's process
    leases.take(db, r4, "dee", "bobs-session")  # an id naming no process: left to lapse
    assert leases.release_dead(db, lambda pid: pid == 222) == 1
    assert leases.held_by_others(db, "d", "nobody") == {r2: "bob", r3: "cy", r4: "dee"}
    assert leases.release_dead(db, lambda pid: pid == 222) == 0
