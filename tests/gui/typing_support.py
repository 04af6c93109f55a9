"""Finding fields the way a person (or a screen reader) does, by their
accessible names, and typing into them."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget


def named(root: QWidget, name: str) -> QWidget:
    """The one widget under ``root`` whose accessible name is ``name``."""
    found = [w for w in root.findChildren(QWidget) if w.accessibleName() == name]
    assert len(found) == 1, f"{len(found)} widgets named {name!r}"
    return found[0]


def problem_line(root: QWidget, field: str) -> QWidget:
    """The line under the field named ``field`` that says what is wrong with it."""
    return named(root, f"{field}: problem")


def problem_text(root: QWidget, field: str) -> str:
    """The message shown under the field named ``field`` ("" while it is hidden or empty)."""
    line = problem_line(root, field)
    if not line.isVisibleTo(root):
        return ""
    return line.text() if isinstance(line, QLabel) else line.accessibleDescription()


def retype(qtbot, edit: QWidget, text: str) -> None:
    """Select what ``edit`` holds and type ``text`` over it, key by key."""
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
