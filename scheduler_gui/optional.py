"""Views built in their own modules, loaded by name when the window needs them.

The shell imports the heavier views (the monitor's, the charts) only when they
are first shown, which keeps the time to the first window short. A page that
has nothing to show yet (no schedule open, the ledger still opening) shows a
quiet note instead.
"""

from __future__ import annotations

import importlib
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from scheduler_gui.a11y import accessible


def load(module: str, name: str) -> Any:
    """``module.name``, imported when first needed (the first window appears sooner)."""
    return getattr(importlib.import_module(module), name)


def placeholder(text: str, parent: QWidget | None = None) -> QLabel:
    """A quiet note standing in for a view that cannot be shown."""
    label = QLabel(text, parent)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    accessible(label, text, text)
    label.setForegroundRole(label.foregroundRole())
    label.setMargin(24)
    return label
