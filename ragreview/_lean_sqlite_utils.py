"""Import sqlite-utils without pandas and numpy.

``sqlite_utils.db`` imports pandas and numpy at import time whenever they are installed,
only to map their scalar types to column types in ``insert``; ragreview creates its
tables with SQL and never inserts pandas or numpy values. On a machine that has them
(any data-science environment, and our dev extra) that import costs every command and
the TUI about a second and 85 MB before anything happens. So while ``sqlite_utils.db``
itself executes, those two names are hidden (unless the program already imported
them); afterwards they import normally, for the Python API's DataFrames and the
agreement bootstrap.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

_HIDDEN = ("pandas", "numpy")


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> Any:
        if name != "sqlite_utils.db":
            return None
        sys.meta_path.remove(self)  # once: the module is then in sys.modules
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_lean(module: ModuleType) -> None:
            hidden = [m for m in _HIDDEN if m not in sys.modules]
            for m in hidden:
                sys.modules[m] = None  # type: ignore[assignment]  # import raises ImportError
            try:
                exec_module(module)
            finally:
                for m in hidden:
                    if sys.modules.get(m, ...) is None:
                        del sys.modules[m]

        spec.loader.exec_module = exec_lean  # type: ignore[method-assign]
        return spec


def install() -> None:
    if "sqlite_utils.db" not in sys.modules and not any(
        isinstance(f, _Finder) for f in sys.meta_path
    ):
        sys.meta_path.insert(0, _Finder())
