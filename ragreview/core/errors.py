"""Errors a user can act on. They carry where the problem is, never a traceback."""

from __future__ import annotations


class RagreviewError(Exception):
    """Base for errors shown to the user as one line."""


class RecordError(RagreviewError):
    """A record (or a label on it) is invalid. ``field`` names the offending field."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message

    def __reduce__(self) -> tuple:  # pickled by the import worker process
        return type(self), (self.field, self.message)


class InputError(RagreviewError):
    """A problem in an input file, located by file and line."""

    def __init__(self, path: str, line: int | None, field: str | None, message: str):
        where = f"{path}:{line}" if line is not None else path
        what = f"{field}: {message}" if field else message
        super().__init__(f"{where}: {what}")
        self.path = path
        self.line = line
        self.field = field
        self.message = message

    def __reduce__(self) -> tuple:  # pickled by the import worker process
        return type(self), (self.path, self.line, self.field, self.message)


class InputWarning(InputError):
    """Something in an input file the user must hear about, although every record in it
    was imported (an id that repeats: the records are stored by their numbers)."""
