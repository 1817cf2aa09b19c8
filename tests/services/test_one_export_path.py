"""One export path (docs/architecture.md, "One function per use case"): the stream
writers are private to ``services/export.py``, and no front end (the CLI, the Python
API, the TUI, ``serve``) opens a file for writing itself: every file they write goes
through the guards of ``services/output_file.py``."""

from __future__ import annotations

import ast
from pathlib import Path

from ragreview.services import export

PACKAGE = Path(__file__).resolve().parents[2] / "ragreview"
# the modules that may open a file for writing: the guards, and the parquet converter
# that writes the temporary file the guards hand it
ALLOWED = {"services/output_file.py", "services/parquet_export.py"}
FRONT = ["api.py", "cli", "tui", "services"]


def _writes(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        receiver = getattr(func, "value", None)
        if isinstance(receiver, ast.Name) and receiver.id == "output_file":
            continue  # the guarded writers themselves
        if name in ("write_text", "write_bytes"):
            lines.append(node.lineno)
        elif name in ("replace", "rename") and isinstance(func, ast.Attribute):
            if len(node.args) == 1 and not node.keywords:  # Path.replace(target), not
                lines.append(node.lineno)  # str.replace(old, new) or dataclasses.replace
        elif name == "open":
            mode = node.args[1] if len(node.args) > 1 else None
            mode = mode or next((k.value for k in node.keywords if k.arg == "mode"), None)
            if isinstance(func, ast.Attribute) and node.args and mode is None:
                mode = node.args[0]  # Path.open("w")
            if isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+"):
                lines.append(node.lineno)
    return lines


def test_no_front_end_writes_a_file_outside_the_guards() -> None:
    found = []
    for part in FRONT:
        root = PACKAGE / part
        for path in sorted([root] if root.is_file() else root.rglob("*.py")):
            rel = path.relative_to(PACKAGE).as_posix()
            if rel in ALLOWED:
                continue
            found += [f"{rel}:{n}" for n in _writes(ast.parse(path.read_text("utf-8")))]
    assert found == []


def test_the_scan_sees_a_planted_writer() -> None:
    code = 'open(p, "w")\nPath(p).write_text("x")\np.open("a")\ntmp.replace(out)\n"a".replace("a", "b")'
    assert _writes(ast.parse(code)) == [1, 2, 3, 4]


def test_the_stream_writers_are_private() -> None:
    public = {name for name in vars(export) if not name.startswith("_")}
    assert {"export", "export_stream"} <= public
    assert not public & {"write", "write_file", "check_destination", "temp_beside"}
