"""Needs attention for a schedule the engines hold: its active revision cannot be read
or expanded here (damaged pinned zone rules, a business calendar no move can serve),
so nothing of it is planned or run until a corrected revision is published. The
card only says so; the decision is publishing (:func:`core.ledger.queries.held_by_engines`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from core.notify.needs import held_key
from scheduler_gui.status_style import look


class HeldCard(QFrame):
    """One held schedule and why, in the engine's words."""

    def __init__(self, schedule_id: str, why: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.schedule_id = schedule_id
        self.why = why
        self.key = held_key(schedule_id)
        colour = look("FAILED").colour
        self.setObjectName("heldCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(f"#heldCard {{ border: 1px solid {colour}; border-radius: 6px; }}")
        self.setAccessibleName(f"held by the engines: {schedule_id}")
        layout = QVBoxLayout(self)
        self.title = QLabel(f"<b style='color:{colour}'>⏸ Held</b> · <b>{schedule_id}</b>")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setAccessibleName(f"Held, {schedule_id}")
        layout.addWidget(self.title)
        self.what = QLabel(why[:1].upper() + why[1:])
        self.what.setWordWrap(True)
        self.what.setTextFormat(Qt.TextFormat.PlainText)
        self.what.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.what.setAccessibleName("Why the engines hold it")
        layout.addWidget(self.what)
