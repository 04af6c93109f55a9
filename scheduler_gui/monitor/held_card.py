"""Needs attention for a schedule the engines hold: its active revision cannot be read
or expanded here (damaged pinned zone rules, a business calendar no move can serve),
so nothing of it is planned or run until a corrected revision is published. The
card only says so; the decision is publishing (:func:`core.ledger.queries.held_by_engines`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from core.desktop.notify.needs import held_key
from scheduler_gui.status_style import look


class NoticeCard(QFrame):
    """A card that only says something: a frame in the colour of a failure, a heading and a
    selectable text (a held schedule; an alert route that keeps failing)."""

    def __init__(
        self,
        object_name: str,
        name: str,
        heading: tuple[str, str],
        text: tuple[str, str],
        parent: QWidget | None = None,
    ) -> None:
        """``heading``: its rich text (``{colour}`` filled in) and accessible name; ``text``: the plain
        text and its accessible name."""
        super().__init__(parent)
        colour = look("FAILED").colour
        self.setObjectName(object_name)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(f"#{object_name} {{ border: 1px solid {colour}; border-radius: 6px; }}")
        self.setAccessibleName(name)
        layout = QVBoxLayout(self)
        self.title = QLabel(heading[0].format(colour=colour))
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setAccessibleName(heading[1])
        layout.addWidget(self.title)
        self.what = QLabel(text[0])
        self.what.setWordWrap(True)
        self.what.setTextFormat(Qt.TextFormat.PlainText)
        self.what.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.what.setAccessibleName(text[1])
        layout.addWidget(self.what)


class HeldCard(NoticeCard):
    """One held schedule and why, in the engine's words."""

    def __init__(self, schedule_id: str, why: str, parent: QWidget | None = None) -> None:
        super().__init__(
            "heldCard",
            f"held by the engines: {schedule_id}",
            (f"<b style='color:{{colour}}'>⏸ Held</b> · <b>{schedule_id}</b>", f"Held, {schedule_id}"),
            (why[:1].upper() + why[1:], "Why the engines hold it"),
            parent,
        )
        self.schedule_id = schedule_id
        self.why = why
        self.key = held_key(schedule_id)
