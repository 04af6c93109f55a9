"""The headless core never imports Qt: scan every module's imports."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core"


def test_core_never_imports_qt() -> None:
    offenders = []
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{path.relative_to(CORE.parent)}: {n}"
                for n in names
                if n.split(".")[0] in ("PySide6", "scheduler_gui", "shiboken6")
            ]
    assert len(list(CORE.rglob("*.py"))) > 40
    assert offenders == []
