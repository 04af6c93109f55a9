"""A desktop notification when something new needs a person.

Where the desktop has no system tray (or the app runs offscreen), this does
nothing at all: the Attention badge in the window says the same thing.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from scheduler_gui.status_style import REDDISH_PURPLE

#: Milliseconds a notification stays up.
MESSAGE_MS = 8000


def _icon() -> QIcon:
    app = QApplication.instance()
    icon = app.windowIcon() if isinstance(app, QApplication) else QIcon()
    if not icon.isNull():
        return icon
    pixmap = QPixmap(64, 64)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(REDDISH_PURPLE))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(4, 4, 56, 56)
    painter.setPen(QColor("white"))
    font = painter.font()
    font.setPixelSize(40)
    font.setBold(True)
    painter.setFont(font)
    painter.drawText(pixmap.rect(), Qt.AlignmentFlag.AlignCenter, "?")
    painter.end()
    return QIcon(pixmap)


class AttentionTray(QObject):
    """Shows a tray message for every batch of occurrences that newly need attention."""

    def __init__(self, watcher: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.icon: QSystemTrayIcon | None = None
        self.messages: list[str] = []
        if watcher is None or not QSystemTrayIcon.isSystemTrayAvailable():
            return
        self.icon = QSystemTrayIcon(_icon(), self)
        self.icon.setToolTip("Tidemark: occurrences that need a decision")
        self.icon.show()
        watcher.newAttention.connect(self.notify)

    @property
    def available(self) -> bool:
        return self.icon is not None

    def notify(self, occurrence_ids: list[str]) -> None:
        """Tell the person that ``occurrence_ids`` need a decision."""
        if self.icon is None or not occurrence_ids:
            return
        n = len(occurrence_ids)
        text = (
            f"{n} occurrences need a decision." if n > 1 else f"{occurrence_ids[0]} needs a decision."
        ) + " Open Needs attention to resolve."
        self.messages.append(text)
        self.icon.showMessage("Tidemark: needs attention", text, QSystemTrayIcon.MessageIcon.Warning, MESSAGE_MS)
