"""The dependency rule (STYLE.md, docs/architecture.md): packages import only from the
packages before them in ``core → families → formats | store → services → tui → cli``
(``families`` declares the record families on top of core, which only holds their
registry: ``core.families``), and the
domain, formats and store load no UI, CLI, LLM client or NLTK, so scripts and the
metrics command start fast."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import subprocess_env

HEAVY = ("textual", "click", "openai", "nltk")
PACKAGE_ROOT = Path(__file__).resolve().parent.parent / "ragreview"

# Each package's rank; a package may import only from packages of a lower rank.
# ``formats`` and ``store`` share a rank and do not import each other.
RANK = {"core": 0, "families": 1, "formats": 2, "store": 2, "services": 3, "tui": 4, "cli": 5}


def loaded_after(statement: str) -> list[str]:
    code = (
        f"import json, sys; {statement}; "
        f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env()
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _module_name(path: Path, root: Path) -> list[str]:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def internal_imports(root: Path = PACKAGE_ROOT) -> list[tuple[str, str, int]]:
    """``(importing module, imported ragreview module, line)`` for every import in the
    package, at module level or inside a function (a deferred import is still an arrow)."""
    arrows = []
    for path in sorted(root.rglob("*.py")):
        parts = _module_name(path, root)
        package = parts if path.name == "__init__.py" else parts[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                # ``from . import x`` imports module x; ``from .m import f`` imports m
                names = [f"{module}.{a.name}" for a in node.names] if not node.module else [module]
            else:
                continue
            arrows += [
                (".".join(parts), n, node.lineno) for n in names if n.startswith("ragreview.")
            ]
    return arrows


def upward_imports(root: Path = PACKAGE_ROOT) -> list[str]:
    """Every arrow that breaks the package order, as ``module:line -> module``."""
    bad = []
    for source, target, line in internal_imports(root):
        src, dst = source.split(".")[1:2], target.split(".")[1:2]
        if not src or not dst or src == dst or src[0] not in RANK or dst[0] not in RANK:
            continue
        if RANK[dst[0]] >= RANK[src[0]]:
            bad.append(f"{source}:{line} -> {target}")
    return bad


def test_packages_import_only_downward() -> None:
    assert upward_imports() == []


def import_cycles(root: Path = PACKAGE_ROOT) -> list[list[str]]:
    """Modules that import each other, directly or round a loop (deferred imports
    count). A package's ``__init__`` is left out: a package naming its submodules, and a
    submodule reaching its package (the click group, ``from . import cli``), is how
    Python packages work, not a circle of logic."""
    modules = {".".join(_module_name(p, root)): p.name for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for source, target, _line in internal_imports(root):
        while target not in modules and "." in target:  # ``from m import f`` -> m
            target = target.rsplit(".", 1)[0]
        if "__init__.py" in (modules.get(source), modules.get(target)) or source == target:
            continue
        graph.setdefault(source, set()).add(target)
    cycles, done = [], set()

    def visit(module: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(module, ())):
            if nxt in path:
                cycles.append(path[path.index(nxt) :])
            elif nxt not in done:
                visit(nxt, [*path, nxt])
        done.add(module)

    for module in sorted(graph):
        if module not in done:
            visit(module, [module])
    return cycles


def test_no_module_imports_itself_round_a_loop() -> None:
    assert import_cycles() == []


def test_the_cycle_check_catches_a_planted_circle(tmp_path: Path) -> None:
    planted = tmp_path / "ragreview"
    for name, text in {
        "__init__.py": "",
        "store/__init__.py": "from . import a, b\n",
        "store/a.py": "from .b import f\n",
        "store/b.py": "def f():\n    from . import a\n",
    }.items():
        (planted / name).parent.mkdir(parents=True, exist_ok=True)
        (planted / name).write_text(text)
    assert import_cycles(planted) == [["ragreview.store.a", "ragreview.store.b"]]


def test_the_layering_check_catches_a_planted_upward_import(tmp_path: Path) -> None:
    planted = tmp_path / "ragreview"
    for name, text in {
        "__init__.py": "",
        "core/__init__.py": "",
        "core/keys.py": "from ..services import judge\n",
        "formats/__init__.py": "",
        "formats/rgb.py": "def f():\n    from ragreview.store import db\n",
        "services/__init__.py": "from ..core import keys\n",
    }.items():
        (planted / name).parent.mkdir(parents=True, exist_ok=True)
        (planted / name).write_text(text)
    assert upward_imports(planted) == [
        "ragreview.core.keys:1 -> ragreview.services",
        "ragreview.formats.rgb:2 -> ragreview.store",
    ]


def test_core_formats_store_import_nothing_heavy() -> None:
    assert loaded_after("import ragreview.core, ragreview.formats, ragreview.store") == []


def test_every_core_formats_store_module_imports_nothing_heavy() -> None:
    import pkgutil

    import ragreview.core
    import ragreview.formats
    import ragreview.store

    modules = [
        info.name
        for package in (ragreview.core, ragreview.formats, ragreview.store)
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + ".")
    ]
    assert "ragreview.store.history" in modules
    assert loaded_after("; ".join(f"import {m}" for m in modules)) == []


@pytest.mark.parametrize("module", ["ragreview.services", "ragreview.formats.sentencizer"])
def test_lazy_modules_load_nothing_heavy(module: str) -> None:
    assert loaded_after(f"import {module}") == []


# Third-party packages core may import, per module. core is the standard library only
# (docs/architecture.md), with one exception: the agreement bootstrap draws its
# 2000 x n resample indices with numpy (imported inside the function, so importing
# core still loads none), which cut `agreement` on 10,000 records from seconds to
# under 0.1 s (issue 17); and Rouge-L's LCS runs in rapidfuzz (also imported inside the
# function), which took an MT-RAG import from 84% pure-Python LCS to C speed (issue 27).
CORE_THIRD_PARTY = {
    "ragreview.core.agreement": {"numpy"},
    "ragreview.core.metrics.rouge": {"rapidfuzz"},
    # the review queue's weights, threshold and keys at 300,000 records (issue 27)
    "ragreview.core.sampling": {"numpy"},
    # the impact scores of a whole dataset in one pass (queue --strategy impact, issue 27)
    "ragreview.core.queue_signals": {"numpy"},
}


def test_core_imports_the_standard_library_only() -> None:
    found = []
    paths = [*(PACKAGE_ROOT / "core").rglob("*.py"), *(PACKAGE_ROOT / "families").rglob("*.py")]
    for path in sorted(paths):
        module = ".".join(_module_name(path, PACKAGE_ROOT))
        allowed = CORE_THIRD_PARTY.get(module, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "ragreview" and top not in allowed:
                    found.append(f"{module}:{node.lineno} imports {name}")
    assert found == []


def test_importing_core_loads_no_numpy() -> None:
    code = "import sys, ragreview.core.agreement_report; print('numpy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env()
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
