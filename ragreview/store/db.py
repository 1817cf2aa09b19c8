"""Opening a review database: WAL, busy timeout, migrations, write transactions."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import RagreviewError
from . import metric_stats_writes, source_blob
from .database import Database
from .migrations import MIGRATIONS

if TYPE_CHECKING:  # the handle is one for type checkers; importing it costs every start
    import sqlite_utils

BUSY_TIMEOUT_MS = 30_000
PAGE_SIZE = 16_384


def connect(path: str | Path) -> sqlite3.Connection:
    """A connection set up for durable, concurrent use.

    WAL lets readers run beside one writer; ``synchronous=FULL`` makes every commit
    durable before we return, so a label the UI shows as done survives a kill or a
    power cut; the busy timeout makes a second process wait for the lock instead of
    failing.

    A new file gets 16 KiB pages (SQLite's default is 4 KiB): a record row holds its
    canonical JSON and its source line (17 KB for a RAGBench row when measured; about 8
    KB since the line is stored compressed), which then spans one or two pages instead
    of three to five, so an import writes (and checkpoints) fewer, fuller pages — about
    a tenth off its time. (A row of 8-16 KB fills a page alone: bench/dbsize_bench.py's
    rows, 7.9 KB on average, put the DB at 1.14x the input, 0.92x with 4 KiB pages.)
    It only applies before the first table is created; an existing database keeps its
    page size.
    """
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    _functions(conn)
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    try:
        _check_ours(conn, path)  # before WAL is switched on: that would change the file
    except BaseException:
        conn.close()
        raise
    conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
    _enable_wal(conn)
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def _functions(conn: sqlite3.Connection) -> sqlite3.Connection:
    """The SQL functions our queries use, on a new connection."""
    conn.create_function(source_blob.SQL_FUNCTION, 1, source_blob.text, deterministic=True)
    return conn


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switching a new file to WAL needs an exclusive lock, and SQLite does not wait for
    it with the busy handler: a second process opening the same new file at that moment
    gets "database is locked" at once. Retry until the busy timeout instead."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
        time.sleep(0.005)


def open_database(path: str | Path, *, read_only: bool = False) -> Database:
    """Open (creating if needed) and migrate a review database.

    ``read_only`` opens an existing file with ``mode=ro`` (commands that only read: it
    works on a read-only mount, and cannot change the file). A file that still needs a
    migration, or the recomputation of a dataset's sums, is opened for writing instead,
    since reading it needs the upgrade.
    A file SQLite cannot use, or that is not ours, raises ``DatabaseProblem``.

    The handle is ``store.database.Database``: sqlite-utils is imported only if a
    migration runs (issue 27: start-up)."""
    conn: sqlite3.Connection | None = None
    try:
        if read_only:
            conn = connect_read_only(path)
            db = Database(conn)
            _check_ours(conn, path)
            if not MIGRATIONS.pending(db) and not _unsummed(conn) and not _undeclared(conn):
                return db
            conn.close()
            conn = None
        conn = connect(path)
        db = Database(conn)
        if MIGRATIONS.pending(db):
            # Hold the write lock for the whole migration (apply re-reads what is pending
            # under it): two processes opening a new file at once would otherwise both
            # apply m001 ("table already exists"), or fail to upgrade a read to a write.
            with write(db.conn):
                MIGRATIONS.apply(db)
        if _undeclared(conn):
            with write(db.conn):
                metric_stats_writes.extend(db.conn)
    except BaseException as err:
        if conn is not None:
            conn.close()
        if isinstance(err, sqlite3.DatabaseError) and is_storage_error(err):
            raise explain(err, path) from None
        raise
    return db


def _undeclared(conn: sqlite3.Connection) -> bool:
    """A family declares stats the file has no column for yet (``metric_stats_writes.extend``
    adds them: a registered family needs no migration of its own)."""
    return bool(metric_stats_writes.missing(conn))


def _unsummed(conn: sqlite3.Connection) -> bool:
    """Some dataset has records but no running sums (a migration dropped them): its
    first read recomputes them (``metric_writes.ensure``), which needs a writer."""
    return (
        conn.execute(
            "SELECT 1 FROM datasets d WHERE NOT EXISTS "
            "(SELECT 1 FROM metric_totals t WHERE t.dataset = d.name) "
            "AND EXISTS (SELECT 1 FROM records r WHERE r.dataset = d.name) LIMIT 1"
        ).fetchone()
        is not None
    )


def connect_read_only(path: str | Path) -> sqlite3.Connection:
    """A connection that cannot write.

    Where the file and its folder are writable it is an ordinary connection with
    ``query_only`` on: SQLite refuses every change, and when the last connection closes
    it removes the ``-wal`` and ``-shm`` files a reader of a WAL database creates (a
    ``mode=ro`` connection leaves them behind, empty, after every read-only command).

    Elsewhere it is SQLite's ``mode=ro``. A WAL database is read with its ``-shm``
    index, which a reader must be able to create when the last writer removed it; on a
    read-only mount it cannot, and SQLite says "unable to open". Nobody can be writing
    there, so the file is then opened as ``immutable`` (no locks, no WAL index)."""
    file = Path(path)
    if not file.is_file():  # (neither way creates a file: say so plainly)
        raise DatabaseProblem(f"{path}: no such database")
    if os.access(file, os.W_OK) and os.access(file.resolve().parent, os.W_OK):
        conn = sqlite3.connect(str(file), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        _functions(conn)
        conn.execute("PRAGMA query_only=ON")
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn
    uri = file.resolve().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as err:
        conn.close()
        if getattr(err, "sqlite_errorname", "") != "SQLITE_CANTOPEN":
            raise
        conn = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    _functions(conn)
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def _check_ours(conn: sqlite3.Connection, path: str | Path) -> None:
    """Raise ``DatabaseProblem`` for a SQLite file of another program (tables, but not
    our migrations table): migrating it would add our tables to someone else's data.
    Reading the schema also makes SQLite check the file header (``not a database``)."""
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    if names and "_sqlite_migrations" not in names:
        raise DatabaseProblem(damaged_message(path))


class DatabaseProblem(RagreviewError):
    """The database file cannot be used: damaged, not ours, read-only, or the disk is
    full. One line saying what to do; never a traceback."""


def is_storage_error(err: BaseException) -> bool:
    """An error from the file or the disk (damaged, full, read-only, locked, I/O), not
    a mistake in our SQL (``IntegrityError``, ``ProgrammingError``), which stays a bug."""
    return isinstance(err, sqlite3.OperationalError) or type(err) is sqlite3.DatabaseError


def damaged_message(path: str | Path) -> str:
    return (
        f"{path} is not a ragreview database or is damaged: run "
        f"sqlite3 {path} 'PRAGMA integrity_check', or restore it from a backup "
        "(docs/safety.md)"
    )


def _no_space(path: str | Path) -> bool:
    import shutil  # (only to explain an error: every command opens a DB, issue 27)

    try:
        return shutil.disk_usage(Path(path).resolve().parent).free < 1024 * 1024
    except OSError:
        return False


def explain(err: sqlite3.Error, path: str | Path) -> DatabaseProblem:
    """One line for a storage error on ``path``, saying what happened to the data."""
    name = getattr(err, "sqlite_errorname", "") or ""
    text = str(err)
    if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or type(err) is sqlite3.DatabaseError:
        return DatabaseProblem(damaged_message(path))
    if name.startswith("SQLITE_FULL") or (name.startswith("SQLITE_IOERR") and _no_space(path)):
        # a full disk shows as an I/O error when even the WAL index cannot be created
        return DatabaseProblem(
            f"{path}: the disk is full: the last change was not saved (every change "
            "reported before it is); free some space and run the command again"
        )
    if name.startswith("SQLITE_READONLY"):
        return DatabaseProblem(
            f"{path}: cannot write here (a read-only file, folder or mount): nothing was changed"
        )
    if name.startswith("SQLITE_CANTOPEN"):
        if Path(path).exists():  # a read-only folder or mount: no journal can be created
            return DatabaseProblem(
                f"{path}: cannot open the database for writing (a read-only file, folder "
                "or mount, or no access): nothing was changed"
            )
        return DatabaseProblem(f"{path}: cannot open the database (no such folder, or no access)")
    if name.startswith("SQLITE_IOERR"):
        return DatabaseProblem(
            f"{path}: the disk reported an error ({text}): the last change was not saved"
        )
    return DatabaseProblem(f"{path}: {text}")


BUILD_SUFFIX = ".building"
BUILD_CACHE_KIB = 64 * 1024


@contextmanager
def building(path: str | Path) -> Iterator[Database]:
    """A new database for ``path``, built aside and put in place when the block ends.

    A first import is most of a database's bytes. In WAL mode every page is written
    twice (to the WAL, then by the checkpoint into the file) and synced at commit; here
    the file is private until it is done, so it is built with an in-memory rollback
    journal and no syncs, then switched to WAL, synced once and linked into place.
    Other processes see no database or the whole one, never a half-built one. If the
    block fails (or ``--strict`` finds errors) nothing is left behind.

    Raises ``FileExistsError`` when another process created ``path`` meanwhile: the
    build is discarded and theirs kept (the caller then imports into theirs).
    """
    import secrets  # (only when a DB is built: every command opens one, issue 27)

    target = Path(path)
    _remove_abandoned_builds(target)
    temp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{BUILD_SUFFIX}")
    conn = _functions(sqlite3.connect(str(temp), check_same_thread=False))
    try:
        conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
        conn.execute("PRAGMA journal_mode=MEMORY")  # rollback still works (errors, Ctrl-C)
        conn.execute("PRAGMA synchronous=OFF")  # synced once, below, before it is published
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")  # nobody else knows the file
        # a larger page cache keeps the records' id index in memory while it grows in
        # random order (about a tenth off a 100k-row import); freed when the build ends
        conn.execute(f"PRAGMA cache_size=-{BUILD_CACHE_KIB}")
        # No foreign-key checks while building: a first import's rows reference only the
        # record rowids it assigns itself, and a lookup per label and metric row was a
        # twentieth of its time. Every later connection (open_database) enforces them.
        conn.execute("PRAGMA foreign_keys=OFF")
        db = Database(conn)
        with write(conn):
            MIGRATIONS.apply(db)
            metric_stats_writes.extend(conn)
        yield db
        conn.execute("PRAGMA journal_mode=WAL")  # stored in the file: persists
        conn.close()
        with open(temp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.link(temp, target)  # never replaces: FileExistsError if it appeared meanwhile
        _sync_directory(target.parent)
    finally:
        conn.close()
        for leftover in (
            temp,
            temp.with_name(temp.name + "-wal"),
            temp.with_name(temp.name + "-shm"),
        ):
            leftover.unlink(missing_ok=True)


def _remove_abandoned_builds(target: Path) -> None:
    """Builds of ``target`` by processes that no longer run (killed mid-import)."""
    for stale in target.parent.glob(f".{target.name}.*{BUILD_SUFFIX}"):
        pid = stale.name[len(target.name) + 2 :].split(".")[0]
        if pid.isdigit() and not _running(int(pid)):
            stale.unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _sync_directory(folder: Path) -> None:
    """Make the new directory entry durable (POSIX; a no-op where dirs cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def memory_database() -> Database:
    db = Database(_functions(sqlite3.connect(":memory:")))
    MIGRATIONS.apply(db)
    metric_stats_writes.extend(db.conn)
    return db


@contextmanager
def write(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One short write transaction, taking the write lock up front.

    ``BEGIN IMMEDIATE`` avoids the deadlock two deferred transactions can get into
    when both try to upgrade to a write lock; the busy timeout then queues writers.
    """
    if conn.in_transaction:  # nested: join the outer transaction
        yield conn
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.rollback()
        raise
    else:
        conn.commit()


def checkpoint(path: str | Path) -> None:
    """Copy committed WAL frames into the main file on a connection of its own.

    The review UI turns automatic checkpoints off on its connection and calls this from
    a worker thread, so no keypress ever waits for a checkpoint. PASSIVE neither waits
    for nor blocks writers; every commit is already durable in the WAL.
    """
    conn = connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    finally:
        conn.close()


def data_version(db: sqlite_utils.Database) -> int:
    """A number that moves when another connection commits, and only then: a cheap
    way to watch for other writers without re-reading anything."""
    return db.conn.execute("PRAGMA data_version").fetchone()[0]


def checkpoint_in_background(db: sqlite_utils.Database) -> None:
    """Turn automatic checkpoints off on this connection: ``checkpoint`` then runs on a
    connection of its own, off the UI thread (a checkpoint can take 100 ms)."""
    db.conn.execute("PRAGMA wal_autocheckpoint=0")


def checkpoint_now(db: sqlite_utils.Database) -> None:
    """A PASSIVE checkpoint on this connection (closing: leave the file compact)."""
    db.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
