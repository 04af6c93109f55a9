"""The lines of text under a designer field: what is wrong with it (in
vermillion, each problem marked ⚠, hidden when there is none) and what the
setting means, in words.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from scheduler_gui.status_style import VERMILLION


def problem_label(parent: QWidget, name: str) -> QLabel:
    """A hidden, word-wrapped label for a field's problems, named ``name`` for screen readers."""
    label = QLabel(parent)
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {VERMILLION};")
    label.setAccessibleName(name)
    label.hide()
    return label


def show_problems(label: QLabel, messages: list[str]) -> None:
    """Show ``messages`` one per line in a :func:`problem_label`; hide it when there are none. The
    label's name stays "<field>: problem": the messages are its description, read after the name."""
    label.setText("\n".join(f"⚠ {m}" for m in messages))
    label.setAccessibleDescription("\n".join(messages))
    label.setVisible(bool(messages))


def meaning_label(parent: QWidget, name: str) -> QLabel:
    """A word-wrapped, quieter label that says what a setting means."""
    label = QLabel(parent)
    label.setWordWrap(True)
    label.setAccessibleName(name)
    label.setStyleSheet("color: palette(placeholder-text);")
    return label
