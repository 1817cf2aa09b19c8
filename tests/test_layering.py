"""The dependency rule (STYLE.md): the domain, formats and store load no UI, CLI,
LLM client or NLTK, so scripts and the metrics command start fast."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import subprocess_env

HEAVY = ("textual", "click", "openai", "nltk")


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


def test_services_package_is_lazy() -> None:
    assert loaded_after("import ragreview.services, ragreview.services.sentencizer") == []
