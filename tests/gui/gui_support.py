"""What the window's tests share besides fixtures: the demo schedules and the fixed now.

Imported by its own name (``from gui_support import NOW``), never as ``conftest``: several
test folders have a conftest.py, and which one the name means depends on what ran last."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.spec.files import load_text

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"
#: A Monday morning before the 2027 spring change in New York.
NOW = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)


def demo_mapping(name: str) -> dict[str, Any]:
    """The mapping of a demo schedule (``daily-ops-summary``)."""
    path = DEMO / f"{name}.yaml"
    return load_text(path.read_text(encoding="utf-8"), str(path))
