"""Only ``store/`` runs SQL (docs/architecture.md): no SQL text, no ``.execute(``-style
call and no ``db[table]`` access anywhere else in the package. Everyone else calls a
store function whose module name says it reads or writes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent / "ragreview"

# Statements as they are written in a string passed to SQLite (uppercase, as this
# codebase writes them); prose in docstrings is left out below.
SQL = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+(OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b"
    r"|\bDELETE\s+FROM\b|\bPRAGMA\s+\w+|\bCREATE\s+(TABLE|INDEX|TRIGGER|VIEW)\b"
    r"|\bALTER\s+TABLE\b|\bBEGIN\s+IMMEDIATE\b"
)
CALLS = {"execute", "executemany", "executescript"}
DB_NAMES = {"db", "database", "conn", "connection"}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string nodes that are docstrings (module, class, function)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _db_like(node: ast.AST) -> bool:
    """``db``, ``self.db``, ``review.db.conn``, …: a name that holds a connection."""
    if isinstance(node, ast.Name):
        return node.id in DB_NAMES
    return isinstance(node, ast.Attribute) and node.attr in DB_NAMES


def sql_outside_store(root: Path = PACKAGE_ROOT) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] == "store":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            where = f"{relative}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in CALLS or (
                    node.func.attr == "query" and _db_like(node.func.value)
                ):
                    found.append(f"{where} calls .{node.func.attr}(")
            elif isinstance(node, ast.Subscript) and _db_like(node.value):
                found.append(f"{where} reads a table as {ast.unparse(node)}")
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
                and SQL.search(node.value)
            ):
                found.append(f"{where} holds SQL: {node.value[:60]!r}")
    return found


def test_no_sql_outside_store() -> None:
    assert sql_outside_store() == []


def test_the_check_catches_planted_sql(tmp_path: Path) -> None:
    planted = tmp_path / "ragreview"
    for name, text in {
        "store/ok.py": 'def f(db):\n    return db.execute("SELECT 1 FROM records")\n',
        "services/a.py": 'def f(db):\n    return db.conn.execute("SELECT id FROM records")\n',
        "tui/b.py": 'Q = "INSERT INTO events (x) VALUES (?)"\n',
        "cli/c.py": "def f(db):\n    return db['records'].count\n",
        "api.py": 'def f(self):\n    """SELECT words FROM prose are fine here."""\n'
        '    return self.db.query("select 1")\n',
    }.items():
        (planted / name).parent.mkdir(parents=True, exist_ok=True)
        (planted / name).write_text(text)
    assert sql_outside_store(planted) == [
        "api.py:3 calls .query(",
        "cli/c.py:2 reads a table as db['records']",
        "services/a.py:2 calls .execute(",
        "services/a.py:2 holds SQL: 'SELECT id FROM records'",
        "tui/b.py:1 holds SQL: 'INSERT INTO events (x) VALUES (?)'",
    ]
