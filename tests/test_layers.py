"""Layers: the headless core never imports Qt nor imports itself in a circle, and the window
holds no SQL and no transaction of its own.

Scans every module's syntax tree: what it imports, and what it calls.
"""

from __future__ import annotations

import ast
import re
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


# The packages' directions (docs/architecture.md draws them; the tests below keep code, rule and
# picture equal). A package is named by its folder: ``basics`` for core's root modules, ``spec``
# for core/spec/, ``gui_monitor`` for scheduler_gui/monitor/; scheduler_gui's root is two:
# ``gui_app`` (the application: the modules below, which import the parts) and ``gui_shared``
# (what every part shares, importing no part).
ARCHITECTURE = CORE.parent / "docs" / "architecture.md"
APP_MODULES = frozenset({"app", "main_window", "status_bar", "screenshot"})

#: Layers, each with its packages. A package may import its own layer's packages and those of
#: every layer its layer stands on, however far down.
LAYERS: dict[str, frozenset[str]] = {
    "L_basics": frozenset({"basics"}),
    "L_time": frozenset({"time"}),
    "L_schedule": frozenset({"spec", "calendar", "recurrence", "team"}),
    "L_ledger": frozenset({"ledger"}),
    "L_engine": frozenset({"engine"}),
    "L_around": frozenset({"explain", "importing", "exporting", "render", "desktop"}),
    "L_cli": frozenset({"cli"}),
    "L_shared": frozenset({"gui_shared"}),
    "L_parts": frozenset({"gui_designer", "gui_monitor", "gui_preview", "gui_workspace", "gui_desktop"}),
    "L_app": frozenset({"gui_app"}),
}
#: (upper layer, the layer it stands on): the solid arrows of the picture.
STANDS_ON = frozenset(
    {
        ("L_time", "L_basics"),
        ("L_schedule", "L_time"),
        ("L_ledger", "L_schedule"),
        ("L_engine", "L_ledger"),
        ("L_around", "L_engine"),
        ("L_cli", "L_around"),
        ("L_shared", "L_around"),
        ("L_parts", "L_shared"),
        ("L_app", "L_parts"),
    }
)
#: The only arrows up a layer: (package, package above it) -> the modules or folders of the
#: upper package it may import (core/desktop/'s wake/, notify/, service_command).
REACHING_UP: dict[tuple[str, str], frozenset[str]] = {
    ("recurrence", "desktop"): frozenset({"wake"}),
    ("ledger", "desktop"): frozenset({"notify"}),
    ("engine", "desktop"): frozenset({"notify", "service_command", "wake"}),
}


def package_of(module: str) -> str | None:
    """The package (as named above) of a dotted module or package name; None outside the project."""
    top, _, rest = module.partition(".")
    first = rest.partition(".")[0]
    if top == "core":
        return first if first and (CORE / first).is_dir() else "basics"
    if top == "scheduler_gui":
        if first and (GUI / first).is_dir():
            return f"gui_{first}"
        return "gui_app" if first in APP_MODULES else "gui_shared"
    return None


def package_arrows() -> set[tuple[str, str, str, str]]:
    """(package, imported package, the imported module's name inside it, importing file) for every
    import across two packages, at any depth (functions, ``TYPE_CHECKING``)."""
    arrows = set()
    for root in (CORE, GUI):
        for where, tree in modules(root):
            source = package_of(Path(where).with_suffix("").as_posix().replace("/", "."))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [f"{node.module}.{a.name}" for a in node.names]
                else:
                    continue
                for name in names:
                    target = package_of(name)
                    if target is not None and target != source:
                        inside = name.split(".")[2] if name.split(".")[1:2] == [target] else ""
                        arrows.add((str(source), target, inside, where))
    return arrows


def layer_of(package: str) -> str:
    return next(layer for layer, members in LAYERS.items() if package in members)


def below(layer: str) -> set[str]:
    """``layer`` and every layer it stands on, however far down."""
    seen, todo = {layer}, [layer]
    while todo:
        upper = todo.pop()
        for lower in (low for up, low in STANDS_ON if up == upper and low not in seen):
            seen.add(lower)
            todo.append(lower)
    return seen


def test_every_package_has_its_layer() -> None:
    found = {p for source, target, _, _ in package_arrows() for p in (source, target)}
    placed = set().union(*LAYERS.values())
    assert found - placed == set(), "a new package: give it a layer here and in docs/architecture.md"
    assert placed - found == set()


def test_no_import_goes_against_the_layers() -> None:
    """A new arrow up a layer (or sideways to core/cli/) fails here, naming the file."""
    offenders = sorted(
        f"{where}: {source} -> {target}.{inside}"
        for source, target, inside, where in package_arrows()
        if layer_of(target) not in below(layer_of(source))
        and inside not in REACHING_UP.get((source, target), frozenset())
    )
    assert offenders == []


def test_every_allowed_arrow_is_in_the_code() -> None:
    """The rule names no arrow the code has not: each layer really stands on the one it is drawn
    on, and each arrow up a layer is really taken."""
    arrows = package_arrows()
    taken = {(layer_of(source), layer_of(target)) for source, target, _, _ in arrows}
    assert STANDS_ON - taken == set()
    up = {((source, target), inside) for source, target, inside, _ in arrows}
    assert {(pair, m) for pair, names in REACHING_UP.items() for m in names} - up == set()


def drawn_layers() -> tuple[dict[str, frozenset[str]], set[tuple[str, str]], dict[tuple[str, str], frozenset[str]]]:
    """docs/architecture.md's layers picture: its subgraphs with their nodes, its solid arrows and
    its dotted arrows with their labels (a mermaid ``flowchart``)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```mermaid\n(.*?)```", text, re.S) if "subgraph L_" in b)
    layers: dict[str, frozenset[str]] = {}
    for name, body in re.findall(r"^\s*subgraph (\w+)\b.*?\n(.*?)^\s*end\s*$", block, re.M | re.S):
        layers[name] = frozenset(re.findall(r"^\s*(\w+)\[", body, re.M))
    solid = set(re.findall(r"^\s*(\w+) --> (\w+)\s*$", block, re.M))
    dotted = {
        (source, target): frozenset(n.strip().strip("/") for n in label.split(","))
        for source, label, target in re.findall(r"^\s*(\w+) -\.->\|([^|]*)\| (\w+)\s*$", block, re.M)
    }
    return layers, solid, dotted


def test_the_architecture_page_draws_the_rule() -> None:
    layers, solid, dotted = drawn_layers()
    assert layers == LAYERS
    assert solid == STANDS_ON
    assert dotted == REACHING_UP


def test_every_path_the_architecture_page_names_exists() -> None:
    paths = re.findall(r"(?<![\w/.])((?:core|scheduler_gui)(?:/\w+)*(?:/|\.py))", ARCHITECTURE.read_text("utf-8"))
    assert len(paths) > 20
    assert sorted(p for p in set(paths) if not (CORE.parent / p).exists()) == []


def test_every_package_says_what_it_holds_and_may_import() -> None:
    """core, scheduler_gui and each package directly in them open with a docstring saying what they
    may import (docs/architecture.md); a new package does too."""
    inits = [CORE / "__init__.py", GUI / "__init__.py", *CORE.glob("*/__init__.py"), *GUI.glob("*/__init__.py")]
    silent = [
        str(init.relative_to(CORE.parent))
        for init in inits
        if "import" not in (ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or "")
    ]
    assert len(inits) > 15
    assert silent == []
