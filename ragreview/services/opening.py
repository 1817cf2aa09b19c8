"""The open use case: the review DB and dataset behind a path, importing the input file
first when needed. ``ragreview open``/``import`` and every other command taking PATH
(``cli.session``), and ``ragreview.open()``, call these; the front ends only add
progress bars and their own way of saying things."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import InputError, RagreviewError
from ..store import open_database
from ..store import records as store_records

if TYPE_CHECKING:
    from .. import formats
    from ..store.database import Database
    from ..store.import_summary import ImportSummary

SQLITE_MAGIC = b"SQLite format 3\x00"

Progress = Callable[[int], None]
# (path) -> a context giving (advance bytes, advance records): the CLI's progress bars
Reading = Callable[[Path], AbstractContextManager[tuple[Progress, Progress]]]


def is_database(path: Path) -> bool:
    """A ``.db`` name (no input format uses it: a damaged one must be reported as a
    damaged database, not as an unknown input format), or a SQLite header."""
    if path.name.endswith(".db"):
        return True
    try:
        with path.open("rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def default_db(path: Path) -> Path:
    """``results.jsonl`` -> ``results.ragreview.db`` beside it."""
    return path.with_name(f"{path.stem}.ragreview.db")


@dataclass
class Target:
    """The DB and dataset a PATH means, and the input file behind them."""

    db_path: Path
    input_path: Path | None  # None when PATH was a DB
    dataset: str | None


def resolve(path: str | Path, db: str | Path | None = None, dataset: str | None = None) -> Target:
    """The DB and dataset PATH means: a DB itself, or an input file and the DB beside
    it (or ``db``). Opens nothing."""
    p = Path(path)
    if p.exists() and not p.is_file():  # refused before anything opens it: a FIFO would
        from ..formats.jsonio import check_regular

        check_regular(p)  # block the open itself until something writes to it
    if is_database(p):
        if not p.exists():
            raise RagreviewError(f"{p}: no such database")
        return Target(p, None, dataset)
    if not p.exists():
        raise RagreviewError(f"{p}: no such file")
    return Target(Path(db) if db else default_db(p), p, dataset or p.stem)


@dataclass
class Opened:
    """An open DB and dataset, with what importing its input just now did."""

    db: Database
    dataset: str
    target: Target
    summary: ImportSummary | None = None  # when the input was imported just now
    errors: list[InputError] = field(default_factory=list)  # its records that were not


def _quiet(path: Path) -> AbstractContextManager[tuple[Progress, Progress]]:
    return nullcontext(((lambda n: None), (lambda n: None)))


def import_file(
    target: Target,
    fmt: str | None = None,
    mapping: dict[str, str] | None = None,
    *,
    strict: bool = False,
    parallel: bool = True,
    reading: Reading = _quiet,
    checking: Callable[[Path], list[InputError]] | None = None,
) -> tuple[Database, ImportSummary, list[InputError]]:
    """Import (or re-import) the target's input file into its DB, creating the DB if
    needed; the open DB, the summary and the records' errors.

    The file is opened before the DB is created, and under ``strict`` every record is
    checked first (``checking``: the CLI's check with a progress bar): a file that cannot
    be read, or any bad record under ``strict``, leaves nothing behind."""
    # (here: the adapters and the import pipeline load only where a file is imported, so
    # a command on an imported DB starts without them)
    from .. import formats
    from ..store.db import building
    from . import importing

    assert target.input_path is not None and target.dataset is not None
    path, dataset = target.input_path, target.dataset
    if strict:
        bad = checking(path) if checking else importing.invalid_records(path, fmt, mapping)
        if bad:
            raise StrictRefusal(bad)
    source = formats.open_source(path, fmt, mapping)
    if not target.db_path.exists():
        try:
            with building(target.db_path) as new:
                summary, errors = _store(new, source, dataset, parallel, reading)
            return open_database(target.db_path), summary, errors
        except FileExistsError:  # another process created it meanwhile: import into theirs
            pass
    database = open_database(target.db_path)
    summary, errors = _store(database, source, dataset, parallel, reading)
    return database, summary, errors


class StrictRefusal(RagreviewError):
    """``strict``: some records are invalid, nothing was imported."""

    def __init__(self, errors: list[InputError]) -> None:
        from .importing import invalid_count

        self.errors = errors
        super().__init__(f"{invalid_count(len(errors))}, nothing imported; first: {errors[0]}")


def _store(
    db: Database,
    source: formats.Source,
    dataset: str,
    parallel: bool,
    reading: Reading,
) -> tuple[ImportSummary, list[InputError]]:
    from . import importing

    with reading(source.path) as (on_bytes, on_records):
        return importing.store(
            db,
            source,
            dataset,
            on_bytes=on_bytes,
            on_records=on_records,
            parallel=parallel,
        )


def open_dataset(
    path: str | Path,
    db: str | Path | None = None,
    dataset: str | None = None,
    *,
    fmt: str | None = None,
    mapping: dict[str, str] | None = None,
    strict: bool = False,
    read_only: bool = False,
    parallel: bool = True,
    reading: Reading = _quiet,
    dataset_option: str = "--dataset",
) -> Opened:
    """The DB and dataset for PATH; an input file not yet imported is imported first
    (``import_file``). ``read_only`` opens an existing DB that cannot be written
    (``store.db.connect_read_only``). ``dataset_option`` names the way to choose a
    dataset in the message for a DB holding several."""
    target = resolve(path, db, dataset)
    if target.input_path is not None:
        assert target.dataset is not None
        if target.db_path.exists():
            database = open_database(target.db_path, read_only=read_only)
            if target.dataset in [d["name"] for d in store_records.datasets(database)]:
                return Opened(database, target.dataset, target)
            database.conn.close()
        database, summary, errors = import_file(
            target, fmt, mapping, strict=strict, parallel=parallel, reading=reading
        )
        return Opened(database, target.dataset, target, summary, errors)
    database = open_database(target.db_path, read_only=read_only)
    names = [d["name"] for d in store_records.datasets(database)]
    try:
        if target.dataset is not None:
            if target.dataset not in names:
                raise RagreviewError(f"{target.db_path}: no dataset {target.dataset!r}")
            return Opened(database, target.dataset, target)
        if not names:
            raise RagreviewError(f"{target.db_path}: the database holds no dataset yet")
        if len(names) > 1:
            raise RagreviewError(
                f"{target.db_path} holds several datasets "
                f"({', '.join(names)}): choose one with {dataset_option}"
            )
    except RagreviewError:
        database.conn.close()
        raise
    return Opened(database, names[0], target)
