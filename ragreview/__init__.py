"""ragreview: see and fix the labels behind LLM-judged RAG evaluations.

From Python: ``ragreview.open(path)`` gives a ``Dataset`` (docs/python.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from ._lean_sqlite_utils import install as _install_lean_sqlite_utils  # noqa: E402

_install_lean_sqlite_utils()

# The built-in record families register themselves (core.families reads the registry):
# every entry point, and any module of the package imported on its own, sees them.
from . import families as _families  # noqa: E402, F401
from .core.errors import RagreviewError  # noqa: E402

if TYPE_CHECKING:
    from .api import Dataset, open  # noqa: A004

__all__ = ["Dataset", "RagreviewError", "open", "__version__"]


def __getattr__(name: str) -> Any:
    """``open`` and ``Dataset`` on first use: the API imports every format adapter and
    the store, which every ``ragreview`` command paid for at start (issue 27)."""
    if name in ("open", "Dataset"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'ragreview' has no attribute {name!r}")
