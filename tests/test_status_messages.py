"""The window says a temporary message one way: ``MainWindow.say`` (``MessageBar.say``), which
shows whole words and keeps all of the message in the tooltip. Qt's ``QStatusBar.showMessage``
paints the text cut at the first permanent item, mid-word: no module calls it.

Scans every window module's syntax tree for a ``.showMessage(`` call."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

GUI = Path(__file__).resolve().parents[1] / "scheduler_gui"
#: The one place that may: the tray icon's balloon (``QSystemTrayIcon.showMessage``), not a status bar.
ALLOWED = {("scheduler_gui/monitor/tray.py", "self.icon.showMessage")}


def calls_in(where: str, source: str) -> set[tuple[str, str]]:
    """(``where``, called expression) of every ``….showMessage(…)`` in ``source``."""
    return {
        (where, ast.unparse(node.func))
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "showMessage"
    }


def show_message_calls() -> set[tuple[str, str]]:
    """Every ``….showMessage(…)`` under scheduler_gui, by module."""
    found: set[tuple[str, str]] = set()
    for path in GUI.rglob("*.py"):
        found |= calls_in(str(path.relative_to(GUI.parent)), path.read_text(encoding="utf-8"))
    return found


def test_no_status_bar_message_bypasses_the_message_bar() -> None:
    calls = show_message_calls()
    assert calls >= ALLOWED, "the scan no longer sees the tray's balloon: is it still looking?"
    assert calls - ALLOWED == set(), "say it with window.say(text, timeout_ms): whole words, all of it in the tooltip"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param(
            "self.statusBar().showMessage(f'Saved {saved}', 5000)", "self.statusBar().showMessage", id="window"
        ),
        pytest.param("f(lambda text: bar.showMessage(text, 8000))", "bar.showMessage", id="lambda"),
        pytest.param("window.say('Saved', 5000)", None, id="say"),
    ],
)
def test_the_scan_finds_what_the_rule_refuses(source: str, expected: str | None) -> None:
    """The calls the window used to make are found by the same walk; ``say`` is not."""
    assert calls_in("m.py", source) == ({("m.py", expected)} if expected else set())
