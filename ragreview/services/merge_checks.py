"""What ``merge`` refuses before it writes anything, and what it warns about: one review
given twice (the same path, the same file, the same review copied), files with no
dataset in common, settings that differ for a dataset the files share."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core.errors import RagreviewError
from ..store.merge_reads import SourceReview


def check_distinct(paths: Sequence[str], sources: Sequence[SourceReview]) -> None:
    """Refuse one review given twice: the same path, the same file under another path
    (a link), or the same review copied (``store.merge_reads.review_digest``)."""
    seen: dict[tuple[int, int], str] = {}
    for i, path in enumerate(paths):
        if path in paths[:i]:
            raise RagreviewError(f"{path} is given twice: merge different reviews")
        info = Path(path).stat()
        first = seen.setdefault((info.st_dev, info.st_ino), path)
        if first != path:
            raise RagreviewError(f"{path} and {first} are the same file: merge different reviews")
    by_digest: dict[str, SourceReview] = {}
    for src in sources:
        other = by_digest.setdefault(src.reviews, src)
        if other is not src:
            raise RagreviewError(
                f"{src.path} and {other.path} hold the same review (the same database, "
                "copied?): merge different reviewers' files"
            )


def check_datasets(sources: Sequence[SourceReview]) -> None:
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


def _names(src: SourceReview) -> str:
    names = sorted(src.names)
    shown = ", ".join(repr(n) for n in names[:5])
    return (shown + f", … ({len(names)} in all)") if len(names) > 5 else (shown or "none")


def setting_differences(sources: Sequence[SourceReview]) -> list[str]:
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


def kept_settings(sources: Sequence[SourceReview]) -> dict[tuple[str, str], str]:
    """Each dataset's settings from the first file that holds it."""
    kept: dict[tuple[str, str], str] = {}
    for src in reversed(sources):
        kept = {k: v for k, v in kept.items() if k[0] not in src.names} | src.settings
    return kept
