"""The only code that knows table names: opening the DB, migrations and queries."""

from .db import memory_database, open_database, write

__all__ = ["memory_database", "open_database", "write"]
