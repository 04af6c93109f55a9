"""Tests use the engine through its public interface: the stages' functions and
:class:`~core.engine.engine.Engine`'s public methods, never a name the engine's
modules keep to themselves (one starting with a single underscore).

Scanned, not trusted. Every single-underscore name ``core/engine`` defines is
collected (functions, methods, classes, module and class attributes,
``self._x`` fields). In each test module, the names that stand for the
engine are those imported from ``core.engine``, and those assigned from, or
annotated with, an expression built on such a name (``engine =
Engine(...)``, ``claim: Claim``). An offence is one of the engine's private
names read off such a name (``engine._promote``, ``Engine(...)._claim``), set
or got by name on one (``monkeypatch.setattr(runner, "_pidfd", ...)``),
imported from ``core.engine``, or overridden or called through ``super()`` by
a subclass of an engine class.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "core" / "engine"
TESTS = ROOT / "tests"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def engine_private_names(root: Path = ENGINE) -> set[str]:
    """Every single-underscore name the engine's modules define."""
    names: set[str] = set()
    paths = list(root.glob("*.py"))
    assert len(paths) > 10, root
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = node.name
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                name = node.id
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                name = node.attr
            else:
                continue
            if _private(name):
                names.add(name)
    return names


def _root(node: ast.AST | None) -> str | None:
    """The name an expression is built on: ``engine`` for ``engine.context.mine``,
    ``Engine`` for ``Engine(ledger, clock)._claim``."""
    while node is not None:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Name):
            return node.id
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):  # a quoted annotation
            try:
                node = ast.parse(node.value, mode="eval").body
            except (SyntaxError, ValueError):  # not an expression; ValueError: a lone surrogate or NUL in the text
                return None
        else:
            return None
    return None


def _engine_names(tree: ast.Module) -> set[str]:
    """The names of a module that stand for the engine (flow-insensitive, to a fixed point)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("core.engine"):
            bound.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            bound.update(a.asname for a in node.names if a.asname and a.name.startswith("core.engine"))
        elif isinstance(node, ast.Call) and any(
            isinstance(a, ast.Constant) and str(a.value).startswith("core.engine") for a in node.args
        ):
            bound.add(f"<import {id(node)}>")  # importlib.import_module("core.engine...")
    while True:
        before = len(bound)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr):
                value = node.value
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                built = _root(value) in bound or (isinstance(value, ast.Call) and f"<import {id(value)}>" in bound)
                annotated = isinstance(node, ast.AnnAssign) and _root(node.annotation) in bound
                if built or annotated:
                    for target in targets:
                        bound.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, ast.arg) and _root(node.annotation) in bound:
                bound.add(node.arg)
            elif isinstance(node, ast.ClassDef) and any(_root(b) in bound for b in node.bases):
                bound.add(node.name)
        if len(bound) == before:
            return bound


def offences(root: Path, private: set[str]) -> Iterator[str]:
    """Where a test module under ``root`` reaches a private engine name."""
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root.parent)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        engine = _engine_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in private and _root(node.value) in engine:
                yield f"{where}:{node.lineno}: .{node.attr}"
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("core.engine"):
                yield from (f"{where}:{node.lineno}: import {a.name}" for a in node.names if _private(a.name))
            elif isinstance(node, ast.Call) and node.args and _root(node.args[0]) in engine:
                called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                named = [a.value for a in node.args[1:2] if isinstance(a, ast.Constant)]
                if called in ("setattr", "getattr", "delattr") and named and named[0] in private:
                    yield f"{where}:{node.lineno}: {called} {named[0]!r}"
            elif isinstance(node, ast.ClassDef) and node.name in engine:
                for item in ast.walk(node):
                    if isinstance(item, ast.FunctionDef) and item.name in private:
                        yield f"{where}:{item.lineno}: overrides {item.name}"
                    elif isinstance(item, ast.Attribute) and item.attr in private and _root(item.value) == "super":
                        yield f"{where}:{item.lineno}: super().{item.attr}"


def test_the_scan_knows_the_engines_private_names() -> None:
    """A guard on the scan itself: it finds names the engine does keep to itself."""
    private = engine_private_names()
    assert {"_write", "_work_queue", "_claim_careful", "_held"} <= private


SAMPLE = """
from core.engine.engine import Engine
from core.engine import runner

def test_it(ledger, clock, monkeypatch):
    engine = Engine(ledger, clock)
    engine._write()
    Engine(ledger, clock)._work_queue("s", None, None)
    monkeypatch.setattr(runner, "_wait_group_gone", None)
    view._write()  # not the engine: left alone
    self._write()
"""


def test_the_scan_finds_what_it_should(tmp_path: Path) -> None:
    (tmp_path / "test_sample.py").write_text(SAMPLE, encoding="utf-8")
    found = [line.split(": ", 1)[1] for line in offences(tmp_path, engine_private_names())]
    assert sorted(found) == ["._work_queue", "._write", "setattr '_wait_group_gone'"]


def test_no_test_reaches_into_the_engine() -> None:
    assert list(offences(TESTS, engine_private_names())) == []
