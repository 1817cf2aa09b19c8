"""Where an export may write, and how: the guards every export passes through
(``services.export.export``, the one export use case of the CLI, the Python API, the
TUI and ``serve``).

- never over the review DB, its ``-wal``/``-shm``/``-journal`` files or an input file,
  compared by resolved path (symlinks) and by file identity (hard links);
- an existing file only with ``force``;
- written under a unique temporary name beside the output, then renamed over it: a
  reader never sees half a file, and the temporary file is removed on every exit path
  (an error, an exception inside a writer, Ctrl-C);
- a ``kill -9`` cannot remove its own temporary file: the next export to the same
  output removes those whose process is gone.
"""

from __future__ import annotations

import os
import re
import secrets
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, TextIO

from ..core.errors import RagreviewError
from ..store import browse
from ..store import records as store_records

if TYPE_CHECKING:  # sqlite_utils imports click; the TUI worker needs no CLI
    import sqlite_utils

# ``.<output name>.<pid>.<8 hex digits>.tmp``: temp_beside's names
_TEMP = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.tmp")


def protected_paths(db: sqlite_utils.Database, *also: str | Path) -> list[Path]:
    """Files an export must never replace: the DB with its WAL, shared-memory and
    journal files, every dataset's input file, and ``also`` (the caller's input)."""
    found: list[Path] = [Path(p) for p in also]
    db_path = browse.database_path(db)
    if db_path:
        found += [Path(db_path + suffix) for suffix in ("", "-wal", "-shm", "-journal")]
    for row in store_records.datasets(db):
        if row["source_path"]:
            source = Path(row["source_path"])
            found.append(source)
            if not source.is_absolute() and db_path:  # stored as typed, maybe elsewhere
                found.append(Path(db_path).parent / source)
    return found


def _refuse(out: object, path: Path) -> RagreviewError:
    return RagreviewError(
        f"{out}: refusing to write over {path} (the review database or an input); "
        "choose another output file"
    )


def _same_file(path: Path, target: Path, target_stat: os.stat_result | None) -> bool:
    if path.resolve() == target:
        return True
    if target_stat is None:
        return False
    try:
        return os.path.samestat(target_stat, path.stat())
    except OSError:
        return False


def check_destination(
    out: Path, protected: Iterable[Path], force: bool, force_word: str = "--force"
) -> None:
    """Refuse to write ``out`` over a protected file (compared by resolved path, which
    follows symlinks, and by inode, which catches hard links), or over any existing
    file without ``force`` (``force_word``: how the caller's user asks for it)."""
    target = out.resolve()
    try:
        out_stat: os.stat_result | None = out.stat()
    except OSError:
        out_stat = None
    for path in protected:
        if _same_file(path, target, out_stat):
            raise _refuse(out, path)
    if out_stat is not None and not force:
        raise RagreviewError(f"{out} already exists: give {force_word} to replace it")


def check_stream(stream: IO[str], protected: Iterable[Path]) -> None:
    """Refuse a stream that is open on a protected file (``--out -`` with standard
    output appended to the DB, a file object a script opened on its input)."""
    try:
        stream_stat = os.fstat(stream.fileno())
    except (OSError, AttributeError, ValueError):  # no file behind it (a StringIO)
        return
    for path in protected:
        try:
            same = os.path.samestat(stream_stat, path.stat())
        except OSError:
            same = False
        if same:
            raise _refuse(getattr(stream, "name", "the output"), path)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process (EPERM): alive
        return True
    return True


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove the temporary files that earlier exports to ``path`` left when they were
    killed (their process is gone); the ones removed. A running export's file is kept.
    Only names ``temp_beside`` makes for this very output are considered."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:  # a folder that does not exist: the write says so
        return removed
    for entry in entries:
        match = _TEMP.fullmatch(entry.name)
        if match is None or match["name"] != path.name or _alive(int(match["pid"])):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            os.unlink(entry.path)
        except OSError:
            continue  # gone meanwhile, or not ours to remove: harmless
        removed.append(Path(entry.path))
    return removed


def temp_beside(path: Path) -> tuple[Path, int]:
    """A new temporary file in ``path``'s folder (so it can be renamed over ``path``),
    under a unique name, created exclusively: never an existing file of the user's.
    Returns its path and an open descriptor for writing."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
    except OSError as err:
        raise RagreviewError(f"{path}: cannot write: {err.strerror}") from None
    return tmp, fd


@contextmanager
def scratch_beside(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` (a converter's intermediate), removed on exit."""
    tmp, fd = temp_beside(path)
    os.close(fd)
    try:
        yield tmp
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` to write; renamed over ``path`` when the
    block ends normally, removed on every other exit. ``OSError`` (a full disk, a folder
    that does not exist) becomes one ``RagreviewError`` line naming ``path``."""
    remove_stale_temps(path)
    tmp, fd = temp_beside(path)
    os.close(fd)
    try:
        yield tmp
        tmp.replace(path)
    except OSError as err:
        raise RagreviewError(f"{path}: cannot write: {err.strerror or err}") from None
    finally:
        tmp.unlink(missing_ok=True)  # (after the rename: nothing left to remove)


SYNC_EVERY = 0.25  # seconds between the syncs that write a long export back as it goes


@contextmanager
def replacing_text(path: Path) -> Iterator[TextIO]:
    """``replacing`` with the temporary file open for UTF-8 text, synced before the
    rename.

    While the block writes, a thread syncs the file every ``SYNC_EVERY`` seconds, so
    the disk takes the file as it is written, beside the writing, and the sync before
    the rename has only the tail left: that last sync was a fifth of a large
    ``export --as source`` (issue 27), all of it after the last line was written."""
    with replacing(path) as tmp:
        try:
            fh = tmp.open("w", encoding="utf-8", newline="")
        except OSError as err:
            raise RagreviewError(f"{path}: cannot write: {err.strerror or err}") from None
        with fh:
            with _syncing(fh.fileno()):
                yield fh
                fh.flush()
            os.fsync(fh.fileno())


@contextmanager
def _syncing(fd: int) -> Iterator[None]:
    """Sync ``fd`` every ``SYNC_EVERY`` seconds in a thread until the block ends (the
    thread waits outside the GIL; it is joined before the block's own last sync)."""
    done = threading.Event()

    def sync() -> None:
        while not done.wait(SYNC_EVERY):
            try:
                os.fsync(fd)
            except OSError:  # (the last sync, in the writing thread, reports it)
                return

    thread = threading.Thread(target=sync, name="ragreview-export-sync", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def write_text(
    db: sqlite_utils.Database,
    path: Path,
    text: str,
    *,
    inputs: Iterable[str | Path] = (),
    force: bool = True,
) -> None:
    """Write ``text`` to ``path`` (a report), guarded like an export: never the DB, its
    WAL or an input; atomic. ``force`` (the default: a report is rewritten in place run
    after run) replaces an existing ordinary file."""
    check_destination(path, protected_paths(db, *inputs), force)
    with replacing_text(path) as fh:
        fh.write(text)
