"""The list fields of the "Business days" section: a search over the holiday codes
(:func:`core.calendar.holiday_search.search_codes`), a list whose rows are removed with a button or the
Delete key, and a date field that adds its date with Enter or a button.
"""

from __future__ import annotations

from datetime import date

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from core.calendar.holiday_search import search_codes
from scheduler_gui.a11y import accessible
from scheduler_gui.designer.field_problem import ProblemLine
from scheduler_gui.designer.typed_inputs import DateTimeField

#: The value a row stands for.
VALUE_ROLE = Qt.ItemDataRole.UserRole + 1
#: Rows the matches list shows before it scrolls.
MATCH_ROWS = 5
_ENTER = (Qt.Key.Key_Return, Qt.Key.Key_Enter)


def _column(parent: QWidget) -> QVBoxLayout:
    layout = QVBoxLayout(parent)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    return layout


def _rows_high(view: QListWidget, rows: int) -> None:
    """Make ``view`` ``rows`` text lines high, and never more: a form's spare room is not the list's."""
    view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    view.setFixedHeight(rows * (view.fontMetrics().height() + 4) + 2 * view.frameWidth() + 2)


class RemovableList(QWidget):
    """Rows of values, each removed with "Remove" or the Delete key (``removed`` says which)."""

    removed = Signal(str)

    def __init__(
        self, name: str, tooltip: str, rows: int, parent: QWidget | None = None, *, remove_name: str | None = None
    ) -> None:
        """``name`` is the list's accessible name; ``remove_name`` its button's (default "<name>: remove")."""
        super().__init__(parent)
        self.list = QListWidget(self)
        accessible(self.list, name, f"{tooltip}\nSelect a row and press Delete (or Remove) to take it out.")
        _rows_high(self.list, rows)
        self.list.installEventFilter(self)
        self.remove_button = QPushButton("Remove", self)
        accessible(self.remove_button, remove_name or f"{name}: remove", "Take the selected row out")
        self.remove_button.clicked.connect(self.remove_current)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.remove_button, 0, Qt.AlignmentFlag.AlignTop)
        self.list.currentRowChanged.connect(lambda _row: self._update_button())
        self._update_button()

    def values(self) -> list[str]:
        return [str(self.list.item(i).data(VALUE_ROLE)) for i in range(self.list.count())]

    def set_rows(self, rows: list[tuple[str, str, str]]) -> None:
        """Show ``(value, text, tooltip)`` rows; the selection stays on the same row when it can."""
        row = self.list.currentRow()
        self.list.blockSignals(True)
        self.list.clear()
        for value, text, tip in rows:
            item = QListWidgetItem(text)
            item.setData(VALUE_ROLE, value)
            item.setToolTip(tip)
            self.list.addItem(item)
        self.list.setCurrentRow(min(row, len(rows) - 1))
        self.list.blockSignals(False)
        self._update_button()

    def remove_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.removed.emit(str(item.data(VALUE_ROLE)))

    def _update_button(self) -> None:
        self.remove_button.setEnabled(self.list.currentRow() >= 0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.list
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace)
        ):
            self.remove_current()
            return True
        return False


class HolidayPicker(QWidget):
    """A search field over the holiday codes with its matches under it, best first. Enter (or a
    double-click on a match) picks the highlighted match; Up and Down move in the matches."""

    picked = Signal(str)
    """A code was chosen."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("a country or region, e.g. berlin, New York, JP, DE-BE")
        self.search.setClearButtonEnabled(True)
        accessible(
            self.search,
            "Public holidays: search",
            "Type a country, a state or region, or its code (berlin, New York, DE-BE), then press Enter to add "
            "its public holidays; Up and Down choose among the matches",
        )
        self.matches = QListWidget(self)
        accessible(self.matches, "Public holidays: matches", "The countries and regions the search finds, best first")
        _rows_high(self.matches, MATCH_ROWS)
        self.matches.hide()
        self.problem = ProblemLine("Public holidays: search", self)
        layout = _column(self)
        layout.addWidget(self.search)
        layout.addWidget(self.matches)
        layout.addWidget(self.problem)
        self.search.textChanged.connect(self._find)
        self.search.installEventFilter(self)
        self.matches.itemActivated.connect(lambda item: self._pick(item))
        self.setFocusProxy(self.search)

    def _find(self, text: str) -> None:
        found = search_codes(text)
        self.matches.clear()
        for match in found:
            item = QListWidgetItem(match.label)
            item.setData(VALUE_ROLE, match.code.code)
            self.matches.addItem(item)
        self.matches.setCurrentRow(0 if found else -1)
        self.matches.setVisible(bool(found))
        gone = bool(text.strip()) and not found
        self.problem.set_messages(
            [f"No country or region the holidays package knows matches {text.strip()!r}"] if gone else []
        )

    def _pick(self, item: QListWidgetItem | None) -> None:
        if item is None:
            return
        code = str(item.data(VALUE_ROLE))
        self.search.setText("")  # ready for the next search (and Ctrl+Z is the window's again)
        self.picked.emit(code)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is not self.search or event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        key = event.key()
        if key in _ENTER:
            self._pick(self.matches.currentItem())
            return True
        if key in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.matches.count():
            step = 1 if key == Qt.Key.Key_Down else -1
            row = max(0, min(self.matches.count() - 1, self.matches.currentRow() + step))
            self.matches.setCurrentRow(row)
            return True
        return False


class DateAdder(QWidget):
    """A date field and an "Add" button: Enter in the field or the button adds its date (``added``);
    text that is not a date says why under the field and adds nothing."""

    added = Signal(date)

    def __init__(self, name: str, tooltip: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.field = DateTimeField(name, tooltip, self, with_time=False)
        self.add_button = QPushButton("Add", self)
        accessible(self.add_button, f"{name}: add", f"Add the date typed in '{name}'")
        self.add_button.clicked.connect(self.add)
        self.problem = ProblemLine(name, self)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        row.addWidget(self.field)
        row.addWidget(self.add_button)
        row.addStretch(1)
        layout = _column(self)
        layout.addLayout(row)
        layout.addWidget(self.problem)
        self.field.edit.returnPressed.connect(self.add)
        self.field.edit.textChanged.connect(lambda _text: self.problem.set_messages([]))
        self.setFocusProxy(self.field)

    def add(self) -> None:
        text = self.field.edit.text()
        try:
            day = self.field.parse(text)
        except ValueError as exc:
            self.problem.set_messages([str(exc)])
            return
        assert isinstance(day, date)
        self.problem.set_messages([])
        self.field.edit.setText(
            ""
        )  # ready for the next date; its own undo history goes with it (Ctrl+Z is the window's)
        self.added.emit(day)
