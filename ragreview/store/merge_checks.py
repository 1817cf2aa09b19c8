"""What ``merge`` refuses before it writes anything, and what it warns about: one review
given twice (the same path, the same file, the same review copied), files with no
dataset in common, settings that differ for a dataset the files share."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..core.errors import RagreviewError


class _Record(Protocol):  # (merge._Record: named here, not imported, so no import loop)
    content_hash: str
    status: str
    reviewed_by: str | None
    reviewed_at: str | None
    human: dict[str, dict[str, Any]]


class _Source(Protocol):  # (merge._Source)
    path: str
    settings: dict[tuple[str, str], str]
    reviews: str

    @property
    def records(self) -> dict[tuple[str, str], Any]: ...
    @property
    def names(self) -> set[str]: ...


def review_digest(conn: sqlite3.Connection, records: Mapping[tuple[str, str], _Record]) -> str:
    """What identifies a review: every record's content, status and human layer, and the
    whole history (who set what, when). Two files with the same digest are one review
    (the same DB, copied): merged, its reviewer would agree with itself."""
    digest = hashlib.sha256()
    for key in sorted(records):
        rec = records[key]
        human = json.dumps(rec.human, sort_keys=True)
        state = (key, rec.content_hash, rec.status, rec.reviewed_by, rec.reviewed_at, human)
        digest.update(repr(state).encode("utf-8", "backslashreplace"))
    for row in conn.execute(
        "SELECT r.dataset, r.id, e.kind, e.name, e.target, e.old, e.new, e.reviewer, e.at "
        "FROM events e JOIN records r ON r.rowid = e.record ORDER BY e.id"
    ):
        digest.update(repr(row).encode("utf-8", "backslashreplace"))
    return digest.hexdigest()


def check_distinct(paths: Sequence[str], sources: Sequence[_Source]) -> None:
    """Refuse one review given twice: the same path, the same file under another path
    (a link), or the same review copied (``review_digest``)."""
    seen: dict[tuple[int, int], str] = {}
    for i, path in enumerate(paths):
        if path in paths[:i]:
            raise RagreviewError(f"{path} is given twice: merge different reviews")
        info = Path(path).stat()
        first = seen.setdefault((info.st_dev, info.st_ino), path)
        if first != path:
            raise RagreviewError(f"{path} and {first} are the same file: merge different reviews")
    by_digest: dict[str, _Source] = {}
    for src in sources:
        other = by_digest.setdefault(src.reviews, src)
        if other is not src:
            raise RagreviewError(
                f"{src.path} and {other.path} hold the same review (the same database, "
                "copied?): merge different reviewers' files"
            )


def check_datasets(sources: Sequence[_Source]) -> None:
    """Refuse a file that shares no dataset with the first: nothing would be compared.
    The same records under another dataset name are named as such."""
    first = sources[0]
    for src in sources[1:]:
        if src.names & first.names:
            continue
        hashes = {r.content_hash for r in first.records.values()}
        same = any(r.content_hash in hashes for r in src.records.values())
        hint = (
            "they hold the same records under another dataset name (import both under one "
            "--dataset)"
            if same
            else "merge reviews of the same imported dataset"
        )
        raise RagreviewError(
            f"{src.path} and {first.path} have no dataset in common ({first.path}: "
            f"{_names(first)}; {src.path}: {_names(src)}): {hint}"
        )


def _names(src: _Source) -> str:
    names = sorted(src.names)
    shown = ", ".join(repr(n) for n in names[:5])
    return (shown + f", … ({len(names)} in all)") if len(names) > 5 else (shown or "none")


def setting_differences(sources: Sequence[_Source]) -> list[str]:
    """A warning per file whose settings of a dataset it shares with the first differ
    (the first file's are kept)."""
    first = sources[0]
    warnings = []
    for src in sources[1:]:
        for name in sorted(src.names & first.names):
            mine = {n: v for (d, n), v in src.settings.items() if d == name}
            kept = {n: v for (d, n), v in first.settings.items() if d == name}
            differ = sorted(n for n in mine.keys() | kept.keys() if mine.get(n) != kept.get(n))
            if differ:
                warnings.append(
                    f"{src.path}: settings of dataset {name!r} differ from {first.path} "
                    f"({', '.join(differ)}); kept those of {first.path}"
                )
    return warnings


def kept_settings(sources: Sequence[_Source]) -> dict[tuple[str, str], str]:
    """Each dataset's settings from the first file that holds it."""
    kept: dict[tuple[str, str], str] = {}
    for src in reversed(sources):
        kept = {k: v for k, v in kept.items() if k[0] not in src.names} | src.settings
    return kept
