"""The chooser of the preview's second zone: the designer's searchable zone
picker when this build has it (a plain editable list otherwise), and a clear
button, since "no second zone" is a choice too. Names are checked by the
model, which reports a bad one beside the field."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QCompleter, QHBoxLayout, QToolButton, QWidget

from core.clock import Clock
from core.zones import available_zones, is_location_zone
from scheduler_gui import optional

NO_ZONE = ""


class _PlainChoice(QComboBox):
    """An editable list of location zones with a contains-completer."""

    zoneChosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setEditable(True)
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.addItem(NO_ZONE)
        self.addItems([z for z in available_zones() if is_location_zone(z)])
        self.setMinimumContentsLength(16)
        completer = QCompleter(self.model(), self)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setCompleter(completer)
        editor = self.lineEdit()
        assert editor is not None  # an editable combo always has one
        editor.setPlaceholderText("none")
        editor.editingFinished.connect(lambda: self.zoneChosen.emit(self.currentText().strip()))
        self.activated.connect(lambda _i: self.zoneChosen.emit(self.currentText().strip()))

    def choose(self, name: str) -> None:
        self.setEditText(name)
        self.zoneChosen.emit(name)


class ZoneChoice(QWidget):
    """Choose a second zone; ``zoneChosen('')`` means none."""

    zoneChosen = Signal(str)

    def __init__(self, clock: Clock | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        picker_class = optional.load("scheduler_gui.designer.zone_picker", "ZonePicker")
        self.picker: QWidget = picker_class(clock) if picker_class is not None else _PlainChoice()
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
        edit = getattr(self.picker, "edit", None)
        if isinstance(edit, QWidget):
            edit.setToolTip(text)

    def setAccessibleName(self, name: str) -> None:
        super().setAccessibleName(name)
        self.picker.setAccessibleName(name)
        edit = getattr(self.picker, "edit", None)
        if isinstance(edit, QWidget):
            edit.setAccessibleName(name)

    def zone(self) -> str:
        return self._last

    def set_zone(self, name: str) -> None:
        """Choose ``name`` ('' for none) as if the person did, and announce it."""
        if name == NO_ZONE and hasattr(self.picker, "set_zone"):
            self.picker.set_zone(NO_ZONE)
            self._announce(NO_ZONE)
            return
        self.picker.choose(name)  # type: ignore[attr-defined]
        self._announce(name)

    def _announce(self, name: str) -> None:
        name = name.strip()
        if name != self._last:
            self._last = name
            self.zoneChosen.emit(name)
