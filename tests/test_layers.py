"""Layers: the headless core never imports Qt, and the window builds no SQL: scan every module's imports."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core"
GUI = CORE.parent / "scheduler_gui"

#: What the window may take from SQLAlchemy: its error types (to say a ledger is
#: unavailable) and its URL parser (to check --db). Statements are the core's.
_GUI_MAY_IMPORT = ("sqlalchemy.exc", "sqlalchemy.engine")


def imports(root: Path) -> Iterator[tuple[str, str]]:
    """(module file relative to the project, imported module) for every import under ``root``."""
    paths = list(root.rglob("*.py"))
    assert len(paths) > 40, root
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                yield str(path.relative_to(root.parent)), module


def test_core_never_imports_qt() -> None:
    offenders = [
        f"{where}: {module}"
        for where, module in imports(CORE)
        if module.split(".")[0] in ("PySide6", "scheduler_gui", "shiboken6")
    ]
    assert offenders == []


def test_the_window_holds_no_sql() -> None:
    """Qt models and views call core queries and commands: no statement is built in the window."""
    offenders = [
        f"{where}: {module}"
        for where, module in imports(GUI)
        if module.split(".")[0] == "sqlalchemy" and module not in _GUI_MAY_IMPORT
    ]
    assert offenders == []
