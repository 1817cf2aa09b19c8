"""The other reviewers on the same database, as the review screen sees them.

Two things: their commits (``PRAGMA data_version`` moves when another connection
commits, and only then, so a cheap timer can watch it without re-reading anything),
and their leases (docs/serve.md). A ``serve`` session leases each record it opens;
every review UI, the terminal one too, passes leased records by and marks them.
"""

from __future__ import annotations

from ..store import browse, leases
from ..store import db as db_state
from .model import Review

WATCH_EVERY_S = 0.5  # how often the screen asks whether someone else committed


class OtherReviewers:
    def __init__(self, review: Review, *, lease: bool = False) -> None:
        self.review = review
        # a database opened without migrating (read-only) may predate leases
        self.known = leases.available(review.db)
        self.lease = lease and self.known  # take leases on the records this session opens
        self._version = self._data_version()

    def _data_version(self) -> int:
        return db_state.data_version(self.review.db)

    def committed(self) -> bool:
        """Another connection committed since the last call."""
        version = self._data_version()
        changed, self._version = version != self._version, version
        return changed

    def holders(self) -> dict[int, str]:
        """``{rowid: reviewer}`` of the records other sessions hold."""
        review = self.review
        if not self.known:
            return {}
        return leases.held_by_others(review.db, review.dataset, review.session)

    def first_unreviewed(self) -> int | None:
        """Where the session starts: the first record neither reviewed nor held."""
        review = self.review
        if self.lease:
            return leases.take_first_unreviewed(
                review.db, review.dataset, review.reviewer, review.session
            )
        if not self.known:
            return browse.first_unreviewed(review.db, review.dataset)
        return leases.first_unreviewed(review.db, review.dataset, review.session)

    def open(self, rowid: int) -> str | None:
        """Take the lease on ``rowid`` (serve sessions); the other holder's name if
        someone else has it."""
        review = self.review
        if not self.lease:
            return self.holders().get(rowid)
        held = leases.take(review.db, rowid, review.reviewer, review.session)
        return None if held is None else held.reviewer

    def renew(self) -> None:
        if self.lease:
            leases.renew(self.review.db, self.review.session)

    def release(self) -> None:
        if self.lease:
            leases.release(self.review.db, self.review.session)
