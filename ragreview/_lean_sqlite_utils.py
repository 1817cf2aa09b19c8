"""Import sqlite-utils without pandas and numpy.

``sqlite_utils.db`` imports pandas and numpy at import time whenever they are installed,
only to map their scalar types to column types in ``insert``; ragreview creates its
tables with SQL and never inserts pandas or numpy values. On a machine that has them
(any data-science environment, and our dev extra) that import costs every command and
the TUI about a second and 85 MB before anything happens. So while ``sqlite_utils.db``
itself executes, those two names are hidden (unless the program already imported
them); afterwards they import normally, for the Python API's DataFrames and the
agreement bootstrap.

Two more start-up costs of every command go the same way (issue 27: one ``ragreview
label`` call should cost at most 0.2 s CPU): ``sqlite_utils.recipes`` (the CLI's
conversion recipes, which import dateutil) loads on first use instead of with
``sqlite_utils.utils``, and the regular expressions ``sqlite_utils.db`` compiles at
import (one, case-insensitive over a large Unicode range, takes tens of milliseconds)
compile on first use.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import re
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

_HIDDEN = ("pandas", "numpy")


class _Finder:  # a meta path finder (not importlib.abc's: importing it costs start-up)
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
            _lazy_module("sqlite_utils.recipes")
            compile_now = re.compile
            re.compile = _compile_lazily_in_db(compile_now)  # type: ignore[assignment]
            try:
                exec_module(module)
            finally:
                re.compile = compile_now
                for m in hidden:
                    if sys.modules.get(m, ...) is None:
                        del sys.modules[m]

        spec.loader.exec_module = exec_lean  # type: ignore[method-assign]
        return spec


class _ModuleOnFirstUse(ModuleType):
    """Stands for a submodule on its package until an attribute is read, then imports it.

    Set as the package's attribute (not in sys.modules), ``from . import name`` takes it
    without importing; ``import package.name`` still imports the real module. (The
    standard LazyLoader loads on the import system's own ``__spec__`` look-up.)"""

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self.__name__)
        return getattr(module, attr)


def _lazy_module(name: str) -> None:
    """Let ``from package import name`` take a stand-in loaded on first use."""
    package, _, child = name.rpartition(".")
    parent = sys.modules.get(package)
    if name in sys.modules or parent is None or hasattr(parent, child):
        return
    setattr(parent, child, _ModuleOnFirstUse(name))


class _LazyPattern:
    """A compiled pattern made on first use, for the module-level patterns of
    ``sqlite_utils.db``."""

    def __init__(self, compile_now: Any, args: tuple[Any, ...]) -> None:
        self._compile_now, self._args, self._pattern = compile_now, args, None

    def __getattr__(self, name: str) -> Any:
        if self._pattern is None:
            self._pattern = self._compile_now(*self._args)
        return getattr(self._pattern, name)


def _compile_lazily_in_db(compile_now: Any) -> Any:
    def compile_for(*args: Any) -> Any:
        if sys._getframe(1).f_globals.get("__name__") == "sqlite_utils.db":
            return _LazyPattern(compile_now, args)
        return compile_now(*args)

    return compile_for


def install() -> None:
    if "sqlite_utils.db" not in sys.modules and not any(
        isinstance(f, _Finder) for f in sys.meta_path
    ):
        sys.meta_path.insert(0, _Finder())
