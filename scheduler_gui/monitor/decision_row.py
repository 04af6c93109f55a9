"""What every Needs attention card ends with: its decisions as a row of buttons, each
named for assistive technology, and the line that says how the decision went."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton

from scheduler_gui.a11y import accessible

K = TypeVar("K")


def decision_row(
    choices: Iterable[tuple[K, str, str]], decide: Callable[[K], None]
) -> tuple[QHBoxLayout, dict[K, QPushButton]]:
    """One button per (key, text, tooltip), its accessible name its text; a click calls ``decide(key)``."""
    row = QHBoxLayout()
    buttons: dict[K, QPushButton] = {}
    for key, text, tip in choices:
        button = QPushButton(text)
        accessible(button, text, tip)
        button.clicked.connect(lambda _checked=False, chosen=key: decide(chosen))
        row.addWidget(button)
        buttons[key] = button
    row.addStretch(1)
    return row, buttons


def result_label() -> QLabel:
    """The hidden line under the buttons that says "Recording…", then a refusal if there is one."""
    message = QLabel()
    message.setWordWrap(True)
    message.setAccessibleName("Result of the decision")
    message.hide()
    return message
