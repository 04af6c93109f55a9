"""Layers: the headless core never imports Qt, and the window holds no SQL and no transaction of its own.

Scans every module's syntax tree: what it imports, and what it calls.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core"
GUI = CORE.parent / "scheduler_gui"


def modules(root: Path) -> Iterator[tuple[str, ast.Module]]:
    """(module file relative to the project, its syntax tree) for every module under ``root``."""
    paths = list(root.rglob("*.py"))
    assert len(paths) > 40, root
    for path in paths:
        yield str(path.relative_to(root.parent)), ast.parse(path.read_text(encoding="utf-8"))


def imports(root: Path) -> Iterator[tuple[str, str]]:
    """(module file relative to the project, imported module) for every import under ``root``."""
    for where, tree in modules(root):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            else:
                continue
            for module in names:
                yield where, module


def test_core_never_imports_qt() -> None:
    offenders = [
        f"{where}: {module}"
        for where, module in imports(CORE)
        if module.split(".")[0] in ("PySide6", "scheduler_gui", "shiboken6")
    ]
    assert offenders == []


def test_the_window_holds_no_sql() -> None:
    """Qt models and views call core queries and commands: nothing of SQLAlchemy in the window
    (not even its error types: the core says a database's failure with its own), and no ORM models."""
    offenders = [
        f"{where}: {module}"
        for where, module in imports(GUI)
        if module.split(".")[0] == "sqlalchemy" or module == "core.ledger.models"
    ]
    assert offenders == []


def test_the_window_opens_no_ledger_session() -> None:
    """Where a transaction begins and ends is the core's decision: the window never calls
    ``.read()`` or ``.write()`` (nor ``.writer()``) on a ledger; it calls one core function,
    which opens its own (``core.ledger.monitor_reads``, ``core.ledger.publish``, ``core.engine.admin``)."""
    offenders = []
    for where, tree in modules(GUI):
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("read", "write", "writer")
                and "ledger" in ast.unparse(node.func.value).lower()
            ):
                offenders.append(f"{where}:{node.lineno}: {ast.unparse(node.func)}()")
    assert offenders == []
