"""The time zone picker: a search field over every IANA location, each shown
with its offset and abbreviation now ("America/New_York — EST −05:00"), and
under it the zone's yearly pattern ("EST −05:00 · DST Mar–Nov") and a note
when its rules changed recently ("no DST since 2022").

Typing lists the zones matching an IANA name, a city, a country or an
abbreviation (``core.time.zone_search``). Enter takes the typed zone only when it is
exact or the one match of its kind ("India" → Asia/Kolkata); otherwise the
list stays open and says to pick one ("EST", "Germany"). Leaving the field with
anything but a zone name puts the chosen zone back and says nothing changed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QFocusEvent, QFont, QFontDatabase, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
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
from core.time.zone_info import choice_for, rules_note, zone_summary
from core.time.zone_search import ZoneMatch, ZoneSearch, search_zones
from scheduler_gui.a11y import accessible
from scheduler_gui.status_style import ORANGE, VERMILLION

NAME_ROLE = Qt.ItemDataRole.UserRole + 1
_Index = QModelIndex | QPersistentModelIndex
SEVERAL = "Several zones match: pick one from the list"
#: The list is at least this wide, so a zone's label and why it matched fit on one line.
_LIST_MIN_WIDTH = 460


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
    """The list under the field: notes first (read, never chosen), then the matching zones, best first."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._notes: list[str] = []
        self._rows: list[ZoneMatch] = []

    def set_result(self, result: ZoneSearch, notes: list[str] | None = None) -> None:
        self.beginResetModel()
        self._notes = [n for n in (notes or []) if n]
        self._rows = list(result.matches)
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's default argument
        return 0 if parent.isValid() else len(self._notes) + len(self._rows)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if index.isValid() and index.row() < len(self._notes):
            # Enabled, so it reads as plainly as the zones; never selected, so never chosen.
            return Qt.ItemFlag.ItemIsEnabled
        return super().flags(index)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < self.rowCount():
            return None
        if index.row() < len(self._notes):
            return self._note_data(self._notes[index.row()], role)
        match = self._rows[index.row() - len(self._notes)]
        choice = match.choice
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, Qt.ItemDataRole.AccessibleTextRole):
            return match.label
        if role == Qt.ItemDataRole.ToolTipRole:
            where = " · ".join(p for p in (choice.country, choice.comment) if p)
            return f"{choice.name}\n{where}" if where else choice.name
        if role == NAME_ROLE:
            return choice.name
        return None

    @staticmethod
    def _note_data(note: str, role: int) -> Any:
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleTextRole):
            return note
        if role == Qt.ItemDataRole.DecorationRole:
            return QApplication.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        if role == Qt.ItemDataRole.FontRole:
            font = QFont()
            font.setItalic(True)
            return font
        return None

    def first_zone_row(self) -> int:
        return len(self._notes)

    def notes(self) -> list[str]:
        return list(self._notes)


class _SearchField(QLineEdit):
    """The picker's line edit. Enter and leaving the field are the picker's to decide.

    Enter is handled here rather than through ``returnPressed`` so that the
    picker can accept the key: the completer then keeps its list open.
    """

    def __init__(self, on_enter: Callable[[], bool], on_leave: Callable[[], None], parent: QWidget) -> None:
        super().__init__(parent)
        self._on_enter = on_enter
        self._on_leave = on_leave

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self._on_enter():
            event.accept()
            return
        super().keyPressEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        # The list opening and the window losing focus are not leaving the field.
        if event.reason() not in (Qt.FocusReason.PopupFocusReason, Qt.FocusReason.ActiveWindowFocusReason):
            self._on_leave()


def _popup(completer: QCompleter) -> QAbstractItemView:
    """The completer's list. Qt makes one when it has none, so it is never None (the stubs allow None)."""
    popup = completer.popup()
    assert popup is not None
    return popup


class _SkipNotes(QObject):
    """Up or Down from the field into the list lands on the first zone, not on a note above it.

    (In this completion mode the completer would select the list's current
    row, which is its first row, a note.)
    """

    def __init__(self, completer: QCompleter, model: ZoneListModel) -> None:
        super().__init__(completer)
        self._completer = completer
        self._model = model

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up)
        ):
            popup = _popup(self._completer)
            row = self._model.first_zone_row()
            if row and not popup.selectionModel().hasSelection() and row < self._model.rowCount():
                index = self._model.index(row, 0)
                flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
                popup.selectionModel().setCurrentIndex(index, flags)
                popup.scrollTo(index)
                return True
        return False


#: What the picker's field does, unless its owner says otherwise.
ZONE_FIELD = (
    "The IANA time zone the schedule's wall-clock times are read in. "
    "Type a city, a country or a zone name (e.g. 'new york', 'India', 'Europe/Berlin') and press Enter, "
    "or pick from the list. An abbreviation such as 'EST' lists the zones that use it."
)


class ZonePicker(QWidget):
    """Search and choose an IANA time zone. ``zoneChosen`` fires when the person picks one.

    ``name`` is the field's accessible name (its row's label) and ``description`` what it does.
    """

    zoneChosen = Signal(str)

    def __init__(
        self,
        clock: Clock | None = None,
        parent: QWidget | None = None,
        *,
        name: str = "Time zone",
        description: str = ZONE_FIELD,
    ) -> None:
        super().__init__(parent)
        self._clock: Clock = clock or SystemClock()
        self._zone = ""
        self._query = ""
        self._shown: tuple[str, datetime] | None = None
        self.model = ZoneListModel(self)
        self.model.set_result(search_zones("", self._clock.now()))

        self.edit = _SearchField(self._on_enter, self._on_leave, self)
        self.edit.setObjectName("zoneSearch")
        self.edit.setPlaceholderText("City, country or zone name")
        accessible(self.edit, name, description)
        self.edit.setFont(tabular(self.edit.font()))
        self.completer = QCompleter(self.model, self)
        self.completer.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self.completer.setMaxVisibleItems(12)
        self.completer.setWidget(self.edit)
        # The stubs type a signal as not indexable; Qt picks the QModelIndex overload of activated by it.
        self.completer.activated[QModelIndex].connect(self._on_activated)  # type: ignore[index]
        popup = _popup(self.completer)
        popup.setMinimumWidth(_LIST_MIN_WIDTH)
        popup.installEventFilter(_SkipNotes(self.completer, self.model))
        self.edit.textEdited.connect(self._on_text_edited)

        self.list_button = QToolButton(self)
        self.list_button.setText("▾")
        accessible(self.list_button, f"{name}: show all time zones", "Show every time zone with its current offset")
        self.list_button.clicked.connect(self.show_all)

        self.summary = QLabel(self)
        self.summary.setObjectName("zoneSummary")
        self.summary.setFont(tabular(self.summary.font()))
        accessible(
            self.summary,
            "Zone offset and daylight saving pattern",
            "The offset in force now, and when daylight saving time runs in this zone",
        )
        self.note = ErrorLine(self, colour=ORANGE, warning=True)
        self.note.setObjectName("zoneNote")
        self.note.setToolTip("Schedules near a rule change may behave differently before and after it")
        self.error = ErrorLine(self)
        self.error.setObjectName("zoneError")
        self.hint = ErrorLine(self, colour=ORANGE, warning=True)
        self.hint.setObjectName("zoneHint")
        self.hint.setToolTip("What became of the text typed in the time zone field")

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        row.addWidget(self.edit, 1)
        row.addWidget(self.list_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addWidget(self.error)
        layout.addWidget(self.hint)
        layout.addWidget(self.summary)
        layout.addWidget(self.note)
        self.setFocusProxy(self.edit)

    # --- state -------------------------------------------------------------------
    def zone(self) -> str:
        """The zone shown (the last one chosen or set)."""
        return self._zone

    def set_zone(self, name: str) -> None:
        """Show ``name`` without emitting ``zoneChosen`` (a name that is not a zone is shown as typed)."""
        self._zone = name or ""
        now = self._clock.now()
        self._say()
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
        self.search(self._query)
        self._shown = None
        self.set_zone(self._zone)

    # --- searching ---------------------------------------------------------------
    def search(self, text: str) -> list[str]:
        """List the zones matching ``text`` (best first) and return their names."""
        result = search_zones(text, self._clock.now())
        self._show_result(result)
        return result.names

    def _show_result(self, result: ZoneSearch, notes: list[str] | None = None) -> None:
        """Put ``result`` in the list, under its own note (an abbreviation's) and ``notes``."""
        self._query = result.query
        self.model.set_result(result, [result.note, *(notes or [])])

    def _on_text_edited(self, text: str) -> None:
        names = self.search(text)
        self._say(error=[] if names else [self._no_match(text)])
        if names:
            self._show_list()
        else:
            _popup(self.completer).hide()

    def show_all(self) -> None:
        self.search("")
        self._say()
        self.edit.setFocus()
        self.edit.selectAll()
        self._show_list()

    def choose(self, name: str) -> None:
        """Pick ``name`` as if the person chose it."""
        _popup(self.completer).hide()
        changed = name != self._zone
        # The list keeps its rows: the completer may still be delivering this
        # very key press, and its index must keep naming the same zone.
        self.set_zone(name)
        if changed:
            self.zoneChosen.emit(name)

    def take_typed(self) -> None:
        """Enter on the field: take the typed zone if it is exact or the only match of its kind.

        With several matches the list opens (or stays open) and says to pick
        one; with none, the field says so. Nothing is chosen in either case.
        """
        text = self.edit.text().strip()
        result = search_zones(text, self._clock.now())
        if result.pick is not None:
            self.choose(result.pick)
        elif not result.matches:
            self._show_result(result)
            self._say(error=[self._no_match(text)])
        else:
            self._show_result(result, [SEVERAL])
            self._say()
            self._show_list()

    def _on_enter(self) -> bool:
        """Whether the picker takes this Enter (False: the completer or the window may have it)."""
        popup = _popup(self.completer)
        listing = popup.isVisible()
        if listing and any(isinstance(i.data(NAME_ROLE), str) for i in popup.selectionModel().selectedIndexes()):
            return False  # a highlighted zone in the list: the completer takes it
        text = self.edit.text().strip()
        if not text or (self._zone and text == self._label()):
            if listing:  # the list was only being looked at
                popup.hide()
            return listing
        self.take_typed()
        return True

    def _on_leave(self) -> None:
        """The field lost focus: take an exact zone name, else put the chosen zone back and say so."""
        text = self.edit.text().strip()
        if text and text != self._label():
            exact = search_zones(text, self._clock.now()).exact
            if exact is not None:
                self.choose(exact)
                return
            still = f" (the zone is still {self._zone})" if self._zone else ""
            self._restore_text()
            self._say(hint=[f"“{text}” is not a time zone; nothing was changed{still}"])
            return
        self._restore_text()
        self._say()

    def _on_activated(self, index: QModelIndex) -> None:
        name = index.data(NAME_ROLE)
        if isinstance(name, str):
            self.choose(name)
        else:  # a note: the list closed, but nothing was chosen yet
            self._show_list()

    def _show_list(self) -> None:
        self.completer.complete()

    def _say(self, *, error: list[str] | None = None, hint: list[str] | None = None) -> None:
        self.error.set_messages(error or [])
        self.hint.set_messages(hint or [])

    @staticmethod
    def _no_match(text: str) -> str:
        return f"No time zone matches “{text.strip()}”; try a city, a country or a zone name"

    def _label(self) -> str:
        try:
            return choice_for(self._zone, self._clock.now()).label
        except ZoneError:
            return self._zone

    def _restore_text(self) -> None:
        if self.edit.text() != self._label():
            self.edit.setText(self._label())
            self.edit.setCursorPosition(0)
