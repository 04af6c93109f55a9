"""Layers: the headless core never imports Qt nor imports itself in a circle, and the window
holds no SQL and no transaction of its own.

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


def core_imports() -> dict[str, set[str]]:
    """Each core module -> the core modules it imports anywhere in its text.

    Every import counts: at module level, inside functions and under
    ``TYPE_CHECKING``. ``from core.ledger import events`` imports the module
    ``core.ledger.events``; ``from core.ledger import EventKind`` imports the
    package ``core.ledger`` (its ``__init__``).
    """
    trees: dict[str, ast.Module] = {}
    for where, tree in modules(CORE):
        parts = Path(where).with_suffix("").parts
        trees[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = tree

    def known(name: str) -> str:
        while name not in trees:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, tree in trees.items():
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0 and node.module, f"{name}: core imports by absolute names"
                base = node.module
                found = [f"{base}.{a.name}" if f"{base}.{a.name}" in trees else base for a in node.names]
            else:
                continue
            targets.update(known(t) for t in found if t.split(".")[0] == "core")
        graph[name] = targets - {name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for after in sorted(graph[node]):
            if after not in index:
                visit(after)
                low[node] = min(low[node], low[after])
            elif after in stack:
                low[node] = min(low[node], index[after])
        if low[node] == index[node]:
            group = []
            while (top := stack.pop()) != node:
                group.append(top)
            if group:
                groups.append(sorted([node, *group]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_the_spec_model_stands_below_recurrence() -> None:
    """Recurrence compiles a ScheduleSpec: the model (and what it imports) never imports recurrence back.

    Validation, which compiles the rule, is ``core.spec.validation``, above both.
    """
    graph = core_imports()
    seen, todo = set(), ["core.spec.model"]
    while todo:
        for after in graph[todo.pop()] - seen:
            seen.add(after)
            todo.append(after)
    assert sorted(m for m in seen if m.startswith("core.recurrence")) == []
    assert "core.spec.model" in graph["core.recurrence.compile"]


def test_core_has_no_import_cycle() -> None:
    """Every core module can be read after the modules it imports: no two import each other, however far round."""
    assert _cycles(core_imports()) == []
