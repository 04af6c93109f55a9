"""The chooser of the preview's second zone: the designer's searchable zone
picker and a clear button, since "no second zone" is a choice too. Names are checked by the
model, which reports a bad one beside the field."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget

from core.clock import Clock
from scheduler_gui.designer.zone_picker import ZonePicker

NO_ZONE = ""


class ZoneChoice(QWidget):
    """Choose a second zone; ``zoneChosen('')`` means none."""

    zoneChosen = Signal(str)

    def __init__(self, clock: Clock | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.picker = ZonePicker(clock)
        self.clear_button = QToolButton()
        self.clear_button.setText("×")
        self.clear_button.setToolTip("No second zone")
        self.clear_button.setAccessibleName("Remove the second zone")
        self.clear_button.clicked.connect(lambda: self.set_zone(NO_ZONE))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.picker, 1)
        layout.addWidget(self.clear_button, 0, Qt.AlignmentFlag.AlignTop)
        self.setFocusProxy(self.picker)
        self._last = NO_ZONE
        self.picker.zoneChosen.connect(self._announce)

    def setToolTip(self, text: str) -> None:
        super().setToolTip(text)
        self.picker.setToolTip(text)
        self.picker.edit.setToolTip(text)

    def setAccessibleName(self, name: str) -> None:
        super().setAccessibleName(name)
        self.picker.setAccessibleName(name)
        self.picker.edit.setAccessibleName(name)

    def zone(self) -> str:
        return self._last

    def set_zone(self, name: str) -> None:
        """Choose ``name`` ('' for none) as if the person did, and announce it."""
        self.picker.set_zone(name)
        self._announce(name)

    def _announce(self, name: str) -> None:
        name = name.strip()
        if name != self._last:
            self._last = name
            self.zoneChosen.emit(name)
