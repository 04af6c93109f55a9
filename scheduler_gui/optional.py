"""Views built in their own modules, loaded by name when the window needs them.

The shell imports the heavier views (the monitor's, the charts) only when they
are first shown, which keeps the time to the first window short; a view that is
not part of this build is shown as a plain note instead of stopping the app.
"""

from __future__ import annotations

import importlib
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget


def load(module: str, name: str) -> Any | None:
    """``module.name``, or None when that module (or the name in it) does not exist in this build.

    Any other import error is a bug and is raised.
    """
    try:
        found = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if module == missing or module.startswith(missing + "."):
            return None
        raise
    return getattr(found, name, None)


def placeholder(text: str, parent: QWidget | None = None) -> QLabel:
    """A quiet note standing in for a view that cannot be shown."""
    label = QLabel(text, parent)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    label.setAccessibleName(text)
    label.setToolTip(text)
    label.setForegroundRole(label.foregroundRole())
    label.setMargin(24)
    return label
