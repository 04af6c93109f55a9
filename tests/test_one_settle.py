"""One way to record an outcome, one way to open an attempt (docs/ledger.md,
"The engine, stage by stage"): scan every module of ``core`` and the window.

An attempt's end, an occurrence's outcome and an after_completion schedule's
next run are written only by :mod:`core.engine.settle`; an attempt row is
inserted only by :func:`core.engine.claim.open_attempt`. The statements they
use live in :mod:`core.engine.statements`; nothing else builds an ``Attempt``
row, sets an outcome, or changes the attempts table.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Who may call what: the writes of an outcome and of a new attempt.
CALLERS = {
    "finish_attempt": {"core/engine/settle.py"},
    "finish_lost_attempt": {"core/engine/settle.py"},
    "schedule_next": {"core/engine/settle.py"},
    "add_attempt": {"core/engine/claim.py"},
    "open_attempt": {"core/engine/claim.py"},
}
STATEMENTS = "core/engine/statements.py"


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def offences(root: Path = ROOT) -> Iterator[str]:
    paths = [*(root / "core").rglob("*.py"), *(root / "scheduler_gui").rglob("*.py")]
    assert len(paths) > 80
    for path in sorted(paths):
        where = str(path.relative_to(root))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = _called(node)
                if name in CALLERS and where not in CALLERS[name]:
                    yield f"{where}:{node.lineno}: calls {name}"
                if name == "Attempt":
                    yield f"{where}:{node.lineno}: builds an Attempt row"
                if ast.unparse(node.func) == "statements.settle" and where != "core/engine/settle.py":
                    yield f"{where}:{node.lineno}: calls statements.settle"
                on_attempts = any(isinstance(a, ast.Name) and a.id in ("Attempt", "_att") for a in node.args)
                if name in ("insert", "update", "delete") and on_attempts and where != STATEMENTS:
                    yield f"{where}:{node.lineno}: {name}s attempts"
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr == "outcome":
                yield f"{where}:{node.lineno}: sets an outcome"


def test_outcomes_and_attempts_are_written_in_one_place() -> None:
    assert list(offences()) == []
