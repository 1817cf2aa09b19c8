"""ragreview: see and fix the labels behind LLM-judged RAG evaluations.

From Python: ``ragreview.open(path)`` gives a ``Dataset`` (docs/python.md).
"""

__version__ = "0.1.0"

from ._lean_sqlite_utils import install as _install_lean_sqlite_utils  # noqa: E402

_install_lean_sqlite_utils()

from .api import Dataset, open  # noqa: E402,A004
from .core.errors import RagreviewError  # noqa: E402

__all__ = ["Dataset", "RagreviewError", "open", "__version__"]
