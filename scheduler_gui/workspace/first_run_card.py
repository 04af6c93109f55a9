"""Where to start: a short card in the sidebar until the person closes it.

It says what the window is for in three steps (pick a schedule and read its
preview, publish it, watch the monitor) and why two demos fail on purpose.
Closed once, it stays closed (``firstRun/cardClosed`` in the settings).
"""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from scheduler_gui.a11y import accessible

#: The settings key remembering that the card was closed.
CLOSED_KEY = "firstRun/cardClosed"
START_HERE = (
    "<b>Start here</b><br>"
    "1. Pick a schedule above: the preview lists its next runs, clock changes included.<br>"
    "2. <b>Publish</b> (Ctrl+Enter) hands it to the engine.<br>"
    "3. <b>Monitor</b> below shows what ran and what needs you.<br>"
    "Two demos fail on purpose, so that Needs attention has something to show; "
    "each pauses after its first failure."
)


class FirstRunCard(QFrame):
    """The first-run card; :meth:`close_card` hides it for good."""

    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        self.setObjectName("firstRunCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        self.setAutoFillBackground(True)
        self.setAccessibleName("Start here")
        self.text = QLabel(START_HERE, self)
        self.text.setWordWrap(True)
        accessible(self.text, "Start here: what to do first", "Three steps to see Tidemark at work")
        self.close_button = QPushButton("Got it", self)
        accessible(self.close_button, "Got it", "Close this card; it does not come back")
        self.close_button.clicked.connect(self.close_card)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addWidget(self.text)
        layout.addLayout(row)
        self.setVisible(not self.closed)

    @property
    def closed(self) -> bool:
        return self._settings.value(CLOSED_KEY, False) in (True, "true")

    def close_card(self) -> None:
        self._settings.setValue(CLOSED_KEY, True)
        self._settings.sync()
        self.hide()
