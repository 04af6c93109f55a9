"""The list fields of the task editor: an argv list (one argument per row,
never a shell string) and a table of environment variables, each with buttons
to add, remove and reorder; the readings that say when their rows are a value
the task can hold (:func:`read_argv`, :func:`read_env`); plus the choices of
the task's effect.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.enums import Effect
from scheduler_gui.a11y import accessible

#: The task's effect: (value in the spec, words in the menu, what it means).
EFFECTS = (
    (
        Effect.NONE.value,
        "Changes nothing (none)",
        "It changes nothing outside itself: when a run's outcome is lost (killed, engine crash), it simply runs again.",
    ),
    (
        Effect.IDEMPOTENT.value,
        "Safe to repeat (idempotent)",
        "Running it twice has the effect of running it once: a run whose outcome is lost is retried.",
    ),
    (
        Effect.NON_IDEMPOTENT.value,
        "Must not run twice (non_idempotent)",
        "Running it twice does it twice (two emails, two payments): a run whose outcome is lost is never re-sent "
        "blindly; the verify probe decides, or a person does.",
    ),
)


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def read_argv(values: list[str], *, required: bool) -> list[str] | None:
    """An argv list as the task stores it; None for an empty optional one (no verify probe).

    An empty row is a row not typed yet, not an empty argument: ValueError names it, as it does a
    missing or empty program.
    """
    if not values:
        if required:
            raise ValueError("the command is empty: add the program to run")
        return None
    if not values[0].strip():
        raise ValueError("the program (first row) is empty")
    for number, value in enumerate(values, start=1):
        if not value:
            raise ValueError(f"row {number} is empty: type the argument or remove the row")
    return list(values)


#: A variable's value as the document holds it: text, or a reference ``{"secret": NAME}``.
EnvValue = str | dict[str, str]


def read_env(rows: list[tuple[str, EnvValue]]) -> dict[str, EnvValue] | None:
    """Environment rows as the task stores them (None when there are none); rows left wholly empty are
    ignored. ValueError names a row without a name, a name that is not one, or a name given twice."""
    env: dict[str, EnvValue] = {}
    for number, (name, value) in enumerate(rows, start=1):
        if not name and not value:
            continue
        if not name:
            raise ValueError(f"row {number} has a value but no name")
        if not _ENV_NAME.fullmatch(name):
            raise ValueError(
                f"{name!r} is not a valid environment variable name: letters, digits and _, not starting with a digit"
            )
        if name in env:
            raise ValueError(f"{name} is given twice")
        env[name] = value
    return env or None


def secret_of(value: object) -> str | None:
    """The secret's name when ``value`` is a reference ``{secret: NAME}``, else None."""
    if isinstance(value, dict) and set(value) == {"secret"} and isinstance(value["secret"], str):
        return value["secret"]
    return None


def env_pairs(env: object) -> list[tuple[str, EnvValue]]:
    """A stored ``task.env`` (or anything in its place) as the rows to show; a reference stays one."""
    if not isinstance(env, dict):
        return []
    pairs: list[tuple[str, EnvValue]] = []
    for name, value in env.items():
        secret = secret_of(value)
        pairs.append((str(name), {"secret": secret} if secret is not None else str(value)))
    return pairs


def mono(widget: QWidget) -> None:
    """Show ``widget``'s text in the system's fixed-width font (commands, output)."""
    widget.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))


def _button(parent: QWidget, text: str, name: str, tip: str, slot: Any) -> QPushButton:
    button = QPushButton(text, parent)
    accessible(button, name, tip)
    button.clicked.connect(slot)
    return button


class ArgvList(QWidget):
    """An argv list: one argument per row, added, removed, edited and reordered."""

    edited = Signal(list)
    """The whole list after a change made here."""

    def __init__(self, name: str, tooltip: str, parent: QWidget | None = None, *, what: str | None = None) -> None:
        """``name`` is the list's accessible name (its row's label), ``what`` names the list in its
        buttons' names ("Command: add"; ``name`` when not given)."""
        super().__init__(parent)
        what = what or name
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.list = QListWidget(self)
        accessible(self.list, name, f"{tooltip}\nOne argument per row, passed as is: no shell, no quoting needed.")
        self.list.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
        )
        self.list.setMaximumHeight(90)
        mono(self.list)
        layout.addWidget(self.list, 1)
        buttons = QVBoxLayout()
        self.add_button = _button(self, "Add", f"{what}: add", f"Add an argument to {what.lower()}", self.add)
        self.remove_button = _button(self, "Remove", f"{what}: remove", "Remove the selected argument", self.remove)
        self.up_button = _button(
            self, "Up", f"{what}: up", "Move the selected argument up", lambda: self.move_selected(-1)
        )
        self.down_button = _button(
            self, "Down", f"{what}: down", "Move the selected argument down", lambda: self.move_selected(1)
        )
        for button in (self.add_button, self.remove_button, self.up_button, self.down_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.setFocusProxy(self.list)  # the row's label reaches the list
        self.list.itemChanged.connect(lambda _item: self._emit())
        self.list.currentRowChanged.connect(lambda _row: self._update_buttons())
        self._update_buttons()

    def values(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def set_values(self, values: list[str]) -> None:
        """Show ``values`` (no signal); the selection stays on the same row when it can."""
        if values == self.values():
            return
        row = self.list.currentRow()
        self.list.blockSignals(True)
        self.list.clear()
        for value in values:
            self.list.addItem(self._item(value))
        self.list.setCurrentRow(min(row, len(values) - 1))
        self.list.blockSignals(False)
        self._update_buttons()

    @staticmethod
    def _item(text: str) -> QListWidgetItem:
        item = QListWidgetItem(text)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        return item

    def add(self, text: str = "") -> None:
        self.list.blockSignals(True)
        item = self._item(text if isinstance(text, str) else "")
        self.list.addItem(item)
        self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        self._emit()
        self.list.editItem(item)

    def remove(self) -> None:
        row = self.list.currentRow()
        if row < 0:
            return
        self.list.blockSignals(True)
        self.list.takeItem(row)
        self.list.blockSignals(False)
        self._emit()

    def move_selected(self, step: int) -> None:
        row = self.list.currentRow()
        target = row + step
        if row < 0 or not 0 <= target < self.list.count():
            return
        self.list.blockSignals(True)
        item = self.list.takeItem(row)
        self.list.insertItem(target, item)
        self.list.setCurrentRow(target)
        self.list.blockSignals(False)
        self._emit()

    def _update_buttons(self) -> None:
        row = self.list.currentRow()
        self.remove_button.setEnabled(row >= 0)
        self.up_button.setEnabled(row > 0)
        self.down_button.setEnabled(0 <= row < self.list.count() - 1)

    def _emit(self) -> None:
        self._update_buttons()
        self.edited.emit(self.values())


#: Where a value cell keeps the name of the secret it refers to.
_SECRET_ROLE = Qt.ItemDataRole.UserRole + 1


class EnvTable(QWidget):
    """Environment variables as a two-column table (name, value) with Add, Remove and "Store as a
    secret". A row whose value is a reference ``{secret: NAME}`` shows it, and its value cannot be
    typed over (remove the row to give a value in clear again)."""

    edited = Signal(list)
    """Every row as (name, value) after a change made here (see :func:`read_env`)."""
    storeAsSecret = Signal(int)
    """The person asked to keep the value of this row as a secret (the task editor does it)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.table = QTableWidget(0, 2, self)
        self.table.setHorizontalHeaderLabels(["Name", "Value"])
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.setMaximumHeight(110)
        accessible(
            self.table,
            "Environment variables",
            "Variables added to the command's environment (task.env); SCHED_* are added for you",
        )
        layout.addWidget(self.table, 1)
        buttons = QVBoxLayout()
        self.add_button = _button(self, "Add", "Environment: add", "Add an environment variable", self.add)
        self.remove_button = _button(
            self, "Remove", "Environment: remove", "Remove the selected environment variable", self.remove
        )
        self.secret_button = _button(
            self,
            "Store as a secret",
            "Environment: store as a secret",
            "Keep the selected value in this computer's keyring (or its secrets file) and write only "
            "{secret: NAME} in the schedule: the ledger never holds the value",
            lambda: self.storeAsSecret.emit(self.table.currentRow()),
        )
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addWidget(self.secret_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.setFocusProxy(self.table)  # the row's label reaches the table
        self.table.itemChanged.connect(lambda _item: self._emit())
        self.table.currentCellChanged.connect(lambda *_: self._update_buttons())
        self._update_buttons()

    def rows(self) -> list[tuple[str, EnvValue]]:
        """Every row as (name, value), unnamed ones included; a reference as ``{"secret": NAME}``."""
        rows: list[tuple[str, EnvValue]] = []
        for r in range(self.table.rowCount()):
            name, value = self.table.item(r, 0), self.table.item(r, 1)
            secret = value.data(_SECRET_ROLE) if value else None
            shown: EnvValue = {"secret": secret} if isinstance(secret, str) else (value.text() if value else "")
            rows.append((name.text() if name else "", shown))
        return rows

    def values(self) -> dict[str, EnvValue]:
        """The variables that have a name."""
        return {name: value for name, value in self.rows() if name}

    def set_pairs(self, pairs: list[tuple[str, EnvValue]]) -> None:
        """Show ``pairs`` (no signal), unless the named rows already say the same."""
        if pairs == [(n, v) for n, v in self.rows() if n]:
            return
        row = self.table.currentRow()
        self.table.blockSignals(True)
        self.table.setRowCount(0)
        for name, value in pairs:
            self._append(name, value)
        if 0 <= row < self.table.rowCount():
            self.table.setCurrentCell(row, 1)
        self.table.blockSignals(False)
        self._update_buttons()

    def _append(self, name: str, value: EnvValue) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.table.setItem(row, 0, QTableWidgetItem(name))
        secret = secret_of(value)
        if secret is None:
            self.table.setItem(row, 1, QTableWidgetItem(str(value)))
            return row
        item = QTableWidgetItem(f"{{secret: {secret}}}")
        item.setData(_SECRET_ROLE, secret)
        font = item.font()
        font.setItalic(True)
        item.setFont(font)
        item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
        item.setToolTip(
            f"Taken from the secret {secret} on the engine's computer when the task starts; "
            "the schedule and the ledger hold only the name"
        )
        item.setData(Qt.ItemDataRole.AccessibleTextRole, f"secret {secret}")
        self.table.setItem(row, 1, item)
        return row

    def add(self) -> None:
        """Add an empty row and start editing its name."""
        self.table.blockSignals(True)
        row = self._append("", "")
        self.table.blockSignals(False)
        self.table.setCurrentCell(row, 0)
        item = self.table.item(row, 0)
        if item is not None:
            self.table.editItem(item)

    def remove(self) -> None:
        """Remove the selected row."""
        row = self.table.currentRow()
        if row >= 0:
            self.table.removeRow(row)
            self._emit()

    def _update_buttons(self) -> None:
        """Store as a secret: for a named row whose value is text that is not empty."""
        row = self.table.currentRow()
        rows = self.rows()
        name, value = rows[row] if 0 <= row < len(rows) else ("", "")
        self.secret_button.setEnabled(bool(name) and isinstance(value, str) and bool(value))

    def _emit(self) -> None:
        self._update_buttons()
        self.edited.emit(self.rows())
