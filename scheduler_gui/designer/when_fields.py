"""Small pieces the forms of the "When" box are built from: the field layouts
(labels of one width, so the parts line up as one form), a duration field
(number and unit), and the conversions behind them. The date and time fields
are :class:`scheduler_gui.designer.typed_inputs.DateTimeField`.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from core.time.durations import format_duration, parse_duration
from core.time.formats import parse_local
from scheduler_gui.a11y import accessible, buddy
from scheduler_gui.designer.typed_inputs import CountSpin

#: Duration units for the interval and delay fields, largest first.
DURATION_UNITS = (("days", 86400), ("hours", 3600), ("minutes", 60), ("seconds", 1))
#: The width of every row label, so the kind row, the per-kind form and the shared rows line up.
LABEL_WIDTH = 64


# --- conversions --------------------------------------------------------------------------


def as_local(value: Any) -> datetime | None:
    """A document's local date-time value (text, datetime or date) as a naive datetime, or None."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, date):
        return datetime.combine(value, datetime.min.time())
    if isinstance(value, str):
        try:
            return parse_local(value)
        except ValueError:
            return None
    return None


def split_duration(value: Any) -> tuple[int, str]:
    """A duration as (number, unit) in the largest unit that divides it (``PT90M`` → 90 minutes)."""
    try:
        seconds = int(parse_duration(value).total_seconds()) if isinstance(value, str) else 0
    except ValueError:
        seconds = 0
    if seconds <= 0:
        return 1, "hours"
    for unit, size in DURATION_UNITS:
        if seconds % size == 0:
            return seconds // size, unit
    return seconds, "seconds"


def join_duration(number: int, unit: str) -> str:
    """``(90, "minutes")`` → ``PT1H30M``."""
    return format_duration(timedelta(seconds=number * dict(DURATION_UNITS)[unit]))


# --- layout -------------------------------------------------------------------------------


def field_row(*widgets: QWidget, stretch_last: bool = False) -> QWidget:
    """Widgets side by side; free room goes to the right unless the last widget takes it."""
    box = QWidget()
    layout = QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(4)
    for w in widgets:
        layout.addWidget(w)
    if not stretch_last:
        layout.addStretch(1)
    return box


def stack(*widgets: QWidget) -> QWidget:
    """Widgets one under the other, tightly (a field, then its messages)."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(1)
    for w in widgets:
        layout.addWidget(w)
    return box


def form_layout(parent: QWidget | None = None) -> QFormLayout:
    """A compact form layout whose fields take the width."""
    form = QFormLayout(parent)
    form.setContentsMargins(0, 0, 0, 0)
    form.setHorizontalSpacing(6)
    form.setVerticalSpacing(3)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    return form


def row_label(text: str) -> QLabel:
    """A row label of the common width."""
    label = QLabel(text)
    label.setMinimumWidth(LABEL_WIDTH)
    return label


def add_row(form: QFormLayout, label: str, field: QWidget, control: QWidget) -> int:
    """Add a row labelled ``label`` whose ``field`` holds ``control`` (the label's buddy: read with it,
    reached through it); the row's index (to show or hide it later)."""
    form.addRow(buddy(row_label(label), control), field)
    return form.rowCount() - 1


# --- fields -------------------------------------------------------------------------------


class DurationField(QWidget):
    """A number and a unit (seconds … days) for an ISO 8601 duration; a typed 0 is kept and reported
    (see :meth:`read`). ``what`` names the number in messages ("the interval")."""

    def __init__(self, name: str, what: str, tooltip: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.number = CountSpin(what, 1, 100000, self)
        accessible(self.number, f"{name}: how many", tooltip)
        self.unit = QComboBox(self)
        for unit, _ in reversed(DURATION_UNITS):
            self.unit.addItem(unit, unit)
        accessible(self.unit, f"{name}: unit", f"The unit of {what}: seconds, minutes, hours or days")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.number)
        layout.addWidget(self.unit)
        layout.addStretch(1)
        self.setFocusProxy(self.number)

    def read(self, text: str) -> str:
        """The duration the number's text ``text`` and the unit make; ValueError while it is none."""
        return join_duration(self.number.number(text), str(self.unit.currentData()))

    def set_value(self, text: Any) -> None:
        number, unit = split_duration(text)
        self.number.setValue(number)
        self.unit.setCurrentIndex(self.unit.findData(unit))
