"""What every command shares: resolving PATH to a DB and dataset, errors, progress."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ..core.errors import InputError, RagreviewError
from ..core.safe_text import printable

SQLITE_MAGIC = b"SQLite format 3\x00"


def default_reviewer() -> str:
    return os.environ.get("USER") or os.environ.get("USERNAME") or "reviewer"


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
    db_path: Path
    input_path: Path | None  # None when PATH was a DB
    dataset: str | None


def resolve(path: str, db: str | None = None, dataset: str | None = None) -> Target:
    p = Path(path)
    if p.exists() and not p.is_file():  # refused before anything opens it: a FIFO would
        # (imported here: ragreview.formats loads every adapter, start-up of each command)
        from ..formats.jsonio import check_regular

        try:  # block the open itself until something writes to it
            check_regular(p)
        except InputError as err:
            raise click.ClickException(str(err)) from None
    if is_database(p):
        if not p.exists():
            raise click.ClickException(f"{p}: no such database")
        remember_db(p)
        return Target(p, None, dataset)
    if not p.exists():
        raise click.ClickException(f"{p}: no such file")
    target = Target(Path(db) if db else default_db(p), p, dataset or p.stem)
    remember_db(target.db_path)
    return target


def progress_enabled() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI")


@contextmanager
def progress(label: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """A progress bar on a terminal; silent when output is piped."""
    if not progress_enabled():
        yield lambda n: None
        return
    with counting_bar() as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)


def counting_bar(*extra_columns: str) -> Any:
    """A rich ``Progress`` on stderr: description, bar, done/total, time left, then
    ``extra_columns``; gone when finished."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        *extra_columns,
        transient=True,
        console=_stderr_console(),
    )


@contextmanager
def file_progress(
    verb: str, path: Path, records: bool = True
) -> Iterator[tuple[Callable[[int], None], Callable[[int], None]]]:
    """Bars while a file is read: its bytes parsed (``reading``) and, with ``records``,
    the records stored. Yields (advance bytes, advance records); silent when piped.

    Both, because some formats parse the whole file before the first record is stored:
    the bytes bar moves from the first line, the records bar once storing starts."""
    if not progress_enabled():
        yield (lambda n: None), (lambda n: None)
        return
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

    try:
        size = path.stat().st_size
    except OSError:
        size = None
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.completed:,.0f} {task.fields[unit]}"),
        transient=True,
        console=_stderr_console(),
    ) as bar:
        read = bar.add_task(f"{verb} {path.name}", total=size, unit="bytes")
        stored = bar.add_task("storing", total=None, unit="records", visible=records)

        def on_bytes(n: int) -> None:
            bar.advance(read, n)

        def on_records(n: int) -> None:
            bar.advance(stored, n)

        yield on_bytes, on_records


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


DB_KEY = "ragreview.db"


def remember_db(path: str | Path) -> None:
    """Note the command's DB, for the one line a storage error is turned into
    (``cli.Group.invoke``): SQLite's errors do not say which file they are about."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[DB_KEY] = str(path)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn our domain errors into one clean line and exit code 1."""
    try:
        yield
    except (RagreviewError, InputError) as err:  # messages may quote ids and file text
        raise click.ClickException(printable(str(err), one_line=True)) from None
