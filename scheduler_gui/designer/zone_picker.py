"""The time zone picker: a search field over every IANA location, each shown
with its offset and abbreviation now ("America/New_York — EST −05:00"), and
under it the zone's yearly pattern ("EST −05:00 · DST Mar–Nov") and a note
when its rules changed recently ("no DST since 2022").

Typing filters the list by words, country or region (``new york``,
``germany``); Enter takes the first match. The zones and their notes come from
``core.zone_info``, read at the clock's current instant.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QCompleter,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.clock import Clock, SystemClock
from core.errors import ZoneError
from core.zone_info import ZoneChoice, choice_for, rules_note, search_zones, zone_choices, zone_summary
from scheduler_gui.status_style import ORANGE, VERMILLION

NAME_ROLE = Qt.ItemDataRole.UserRole + 1
_Index = QModelIndex | QPersistentModelIndex


def tabular(font: QFont) -> QFont:
    """``font`` with tabular (equal-width) digits, so times and offsets line up."""
    out = QFont(font)
    out.setFeature(QFont.Tag("tnum"), 1)
    return out


def fixed_font() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class ErrorLine(QWidget):
    """A small message beside a field: an icon and red text, hidden while empty."""

    def __init__(self, parent: QWidget | None = None, *, colour: str = VERMILLION, warning: bool = False) -> None:
        super().__init__(parent)
        self.icon = QLabel(self)
        kind = QStyle.StandardPixmap.SP_MessageBoxWarning if warning else QStyle.StandardPixmap.SP_MessageBoxCritical
        self.icon.setPixmap(self.style().standardIcon(kind).pixmap(14, 14))
        self.icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.text = QLabel(self)
        self.text.setWordWrap(True)
        self.text.setStyleSheet(f"color: {colour};")
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.icon, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.text, 1)
        self.setVisible(False)

    def set_messages(self, messages: list[str]) -> None:
        text = "\n".join(dict.fromkeys(m for m in messages if m))
        self.text.setText(text)
        self.setAccessibleName(text)
        self.setVisible(bool(text))

    def message(self) -> str:
        """The message shown, or an empty text."""
        return self.text.text()


class ZoneListModel(QAbstractListModel):
    """The zones matching the current search, each with its label and name."""

    def __init__(self, choices: list[ZoneChoice], parent: Any = None) -> None:
        super().__init__(parent)
        self._all = choices
        self._rows = list(choices)

    def set_choices(self, choices: list[ZoneChoice]) -> None:
        self.beginResetModel()
        self._all = choices
        self._rows = list(choices)
        self.endResetModel()

    def set_filter(self, text: str) -> None:
        self.beginResetModel()
        self._rows = search_zones(self._all, text)
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's default argument
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        choice = self._rows[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, Qt.ItemDataRole.AccessibleTextRole):
            return choice.label
        if role == Qt.ItemDataRole.ToolTipRole:
            where = " · ".join(p for p in (choice.country, choice.comment) if p)
            return f"{choice.name}\n{where}" if where else choice.name
        if role == NAME_ROLE:
            return choice.name
        return None

    def name_at(self, row: int) -> str:
        return self._rows[row].name


class ZonePicker(QWidget):
    """Search and choose an IANA time zone. ``zoneChosen`` fires when the person picks one."""

    zoneChosen = Signal(str)

    def __init__(self, clock: Clock | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._clock: Clock = clock or SystemClock()
        self._zone = ""
        self._shown: tuple[str, datetime] | None = None
        self.model = ZoneListModel(zone_choices(self._clock.now()), self)

        self.edit = QLineEdit(self)
        self.edit.setObjectName("zoneSearch")
        self.edit.setPlaceholderText("Search: city, country or region")
        self.edit.setAccessibleName("Time zone")
        self.edit.setToolTip(
            "The IANA time zone the schedule's wall-clock times are read in. "
            "Type a city, country or region (e.g. 'new york', 'germany') and press Enter, or pick from the list."
        )
        self.edit.setFont(tabular(self.edit.font()))
        self.completer = QCompleter(self.model, self)
        self.completer.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self.completer.setMaxVisibleItems(12)
        self.completer.setWidget(self.edit)
        self.completer.activated[QModelIndex].connect(self._on_activated)
        self.edit.textEdited.connect(self._on_text_edited)
        self.edit.returnPressed.connect(self.choose_first)
        self.edit.editingFinished.connect(self._restore_text)

        self.list_button = QToolButton(self)
        self.list_button.setText("▾")
        self.list_button.setAccessibleName("Show all time zones")
        self.list_button.setToolTip("Show every time zone with its current offset")
        self.list_button.clicked.connect(self.show_all)

        self.summary = QLabel(self)
        self.summary.setObjectName("zoneSummary")
        self.summary.setFont(tabular(self.summary.font()))
        self.summary.setAccessibleName("Zone offset and daylight saving pattern")
        self.summary.setToolTip("The offset in force now, and when daylight saving time runs in this zone")
        self.note = ErrorLine(self, colour=ORANGE, warning=True)
        self.note.setObjectName("zoneNote")
        self.note.setToolTip("Schedules near a rule change may behave differently before and after it")
        self.error = ErrorLine(self)
        self.error.setObjectName("zoneError")

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        row.addWidget(self.edit, 1)
        row.addWidget(self.list_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addWidget(self.summary)
        layout.addWidget(self.note)
        layout.addWidget(self.error)
        self.setFocusProxy(self.edit)

    # --- state -------------------------------------------------------------------
    def zone(self) -> str:
        """The zone shown (the last one chosen or set)."""
        return self._zone

    def set_zone(self, name: str) -> None:
        """Show ``name`` without emitting ``zoneChosen`` (a name that is not a zone is shown as typed)."""
        self._zone = name or ""
        now = self._clock.now()
        self.error.set_messages([])
        if self._shown == (self._zone, now):
            # Same zone at the same instant: only the field may need its label back.
            self.edit.setText(self._label())
            self.edit.setCursorPosition(0)
            return
        self._shown = (self._zone, now)
        try:
            self.edit.setText(choice_for(name, now).label)
            self.summary.setText(zone_summary(name, now))
            note = rules_note(name, now)
            self.note.set_messages([note] if note else [])
        except ZoneError:
            self.edit.setText(name or "")
            self.summary.setText("")
            self.note.set_messages([])
        self.summary.setVisible(bool(self.summary.text()))
        self.edit.setCursorPosition(0)

    def refresh_now(self) -> None:
        """Read offsets again (after the clock moved far, e.g. across a clock change)."""
        self.model.set_choices(zone_choices(self._clock.now()))
        self.set_zone(self._zone)

    # --- searching ---------------------------------------------------------------
    def search(self, text: str) -> list[str]:
        """Filter the list to ``text`` and return the matching zone names (best first)."""
        self.model.set_filter(text)
        return [self.model.name_at(r) for r in range(self.model.rowCount())]

    def _on_text_edited(self, text: str) -> None:
        names = self.search(text)
        self.error.set_messages([] if names else [f"No time zone matches “{text.strip()}”; try a city or a country"])
        if names:
            self.completer.complete()

    def show_all(self) -> None:
        self.search("")
        self.edit.setFocus()
        self.edit.selectAll()
        self.completer.complete()

    def choose(self, name: str) -> None:
        """Pick ``name`` as if the person chose it."""
        popup = self.completer.popup()
        if popup is not None:
            popup.hide()
        changed = name != self._zone
        # The list keeps its filter: the completer may still be delivering this
        # very key press, and its index must keep naming the same zone.
        self.set_zone(name)
        if changed:
            self.zoneChosen.emit(name)

    def choose_first(self) -> None:
        """Enter: take the best match of what was typed (nothing when nothing matches)."""
        text = self.edit.text().strip()
        if self._zone and text == self._label():
            return
        names = self.search(text)
        if not names:
            self.error.set_messages([f"No time zone matches “{text}”; try a city or a country"])
            return
        self.choose(names[0])

    def _on_activated(self, index: QModelIndex) -> None:
        name = index.data(NAME_ROLE)
        if isinstance(name, str):
            self.choose(name)

    def _label(self) -> str:
        try:
            return choice_for(self._zone, self._clock.now()).label
        except ZoneError:
            return self._zone

    def _restore_text(self) -> None:
        popup = self.completer.popup()
        if popup is not None and popup.isVisible():
            return
        if self.edit.text() != self._label():
            self.edit.setText(self._label())
            self.edit.setCursorPosition(0)
        self.error.set_messages([])
