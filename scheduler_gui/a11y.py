"""What a screen reader says about a control, set in one place.

Every control gets three things together: its accessible name (the words of
its visible label: the field in the row "At" is named "At"; a second field
under the same label says which it is, "At (minutes past the hour)"), its
accessible description (what it does, in a sentence) and its tooltip (the
same sentence, unless a shorter one fits the mouse better). A row label is
the buddy of its field, so a screen reader reads the two together and a
mnemonic in the label (``&From``) puts the cursor in the field.

A control whose explanation changes (a button that says why it is off) takes
the new sentence through :func:`explain`, so the description never lags
behind the tooltip.

Tab order is :mod:`scheduler_gui.tab_order`.
"""

from __future__ import annotations

import re
from typing import TypeVar

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractButton, QLabel, QToolButton, QWidget

W = TypeVar("W", bound=QWidget)


def accessible(widget: W, name: str, description: str, *, tooltip: str | None = None) -> W:
    """Give ``widget`` its accessible ``name``, its ``description`` and a tooltip (the description
    unless ``tooltip`` is given); returns the widget."""
    widget.setAccessibleName(name)
    explain(widget, description, tooltip=tooltip)
    return widget


def explain(widget: QWidget, description: str, *, tooltip: str | None = None) -> None:
    """Say anew what ``widget`` does (or why it is off): its description and its tooltip."""
    widget.setAccessibleDescription(description)
    widget.setToolTip(description if tooltip is None else tooltip)


def buddy(label: QLabel, field: QWidget) -> QLabel:
    """Make ``label`` the label of ``field`` (read with it, and its mnemonic focuses it); returns the label."""
    label.setBuddy(field)
    return label


def plain_text(text: str) -> str:
    """A button's or action's text as said: without the ``&`` of a mnemonic or a trailing ``…``."""
    return re.sub(r"&(.)", r"\1", text).removesuffix("…").strip()


def follow_action(button: QAbstractButton, action: QAction) -> None:
    """A tool button made for ``action`` says what the action says, now and whenever it changes (its
    words; its tooltip, where an action that is off tells why). A button that shows one of several
    actions (its default action) is given each of them and speaks for the one it shows."""

    def update() -> None:
        shown = button.defaultAction() if isinstance(button, QToolButton) else None
        if shown is not None and shown is not action:
            return
        button.setAccessibleName(plain_text(action.iconText() or action.text()))
        explain(button, action.toolTip() or plain_text(action.text()), tooltip=action.toolTip())

    update()
    action.changed.connect(update)
