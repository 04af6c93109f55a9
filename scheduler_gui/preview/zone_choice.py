"""The chooser of the preview's second zone: the designer's searchable zone
picker and a clear button, since "no second zone" is a choice too. Names are checked by the
model, which reports a bad one beside the field."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget

from core.clock import Clock
from scheduler_gui.a11y import accessible
from scheduler_gui.designer.zone_picker import ZonePicker

NO_ZONE = ""


class ZoneChoice(QWidget):
    """Choose a second zone; ``zoneChosen('')`` means none. ``name`` is the field's accessible name
    (the label beside it) and ``description`` what it does."""

    zoneChosen = Signal(str)

    def __init__(
        self,
        clock: Clock | None = None,
        parent: QWidget | None = None,
        *,
        name: str = "Also in",
        description: str = "Also show every time in another zone (leave empty for none)",
    ) -> None:
        super().__init__(parent)
        self.picker = ZonePicker(clock, name=name, description=description)
        self.clear_button = QToolButton()
        self.clear_button.setText("×")
        accessible(self.clear_button, f"{name}: remove the second zone", "No second zone: show the times in one zone")
        self.clear_button.clicked.connect(lambda: self.set_zone(NO_ZONE))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.picker, 1)
        layout.addWidget(self.clear_button, 0, Qt.AlignmentFlag.AlignTop)
        self.setFocusProxy(self.picker)
        self._last = NO_ZONE
        self.picker.zoneChosen.connect(self._announce)

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
