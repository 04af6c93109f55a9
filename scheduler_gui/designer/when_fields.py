"""Small pieces the forms of the "When" box are built from: the field layouts
(labels of one width, so the parts line up as one form), a wall-time field, a
duration field (number and unit), and the conversions behind them.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from PySide6.QtCore import QDate, QDateTime, Qt, QTime, QTimeZone
from PySide6.QtWidgets import (
    QComboBox,
    QDateTimeEdit,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.durations import format_duration, parse_duration
from core.timefmt import parse_local
from scheduler_gui.designer.zone_picker import tabular

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


def tip(widget: QWidget, name: str, tooltip: str) -> None:
    """Give ``widget`` its accessible name and tooltip."""
    widget.setAccessibleName(name)
    widget.setToolTip(tooltip)


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


def add_row(form: QFormLayout, label: str, field: QWidget) -> int:
    """Add a labelled row; its index (to show or hide it later)."""
    form.addRow(row_label(label), field)
    return form.rowCount() - 1


# --- fields -------------------------------------------------------------------------------


class WallTimeEdit(QDateTimeEdit):
    """A date-time field for a naive wall time: no system time zone gets in the way (no gap, no fold)."""

    def __init__(self, parent: QWidget | None = None, *, with_time: bool = True) -> None:
        super().__init__(parent)
        self.setTimeZone(QTimeZone(QTimeZone.Initialization.UTC))
        self.setDisplayFormat("yyyy-MM-dd HH:mm" if with_time else "yyyy-MM-dd")
        self.setCalendarPopup(True)
        self.setFont(tabular(self.font()))
        self.setMinimumDate(QDate(1900, 1, 1))

    def naive(self) -> datetime:
        d, t = self.date(), self.time()
        return datetime(d.year(), d.month(), d.day(), t.hour(), t.minute())

    def set_naive(self, value: datetime) -> None:
        qdt = QDateTime(QDate(value.year, value.month, value.day), QTime(value.hour, value.minute))
        qdt.setTimeZone(QTimeZone(QTimeZone.Initialization.UTC))
        if self.dateTime() != qdt:
            self.setDateTime(qdt)


class DurationField(QWidget):
    """A number and a unit (seconds … days) for an ISO 8601 duration."""

    def __init__(self, name: str, tooltip: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.number = QSpinBox(self)
        self.number.setRange(1, 100000)
        self.number.setFont(tabular(self.number.font()))
        tip(self.number, f"{name}: how many", tooltip)
        self.unit = QComboBox(self)
        for unit, _ in reversed(DURATION_UNITS):
            self.unit.addItem(unit, unit)
        tip(self.unit, f"{name}: unit", tooltip)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.number)
        layout.addWidget(self.unit)
        layout.addStretch(1)
        self.setFocusProxy(self.number)

    def value(self) -> str:
        return join_duration(self.number.value(), str(self.unit.currentData()))

    def set_value(self, text: Any) -> None:
        number, unit = split_duration(text)
        self.number.setValue(number)
        self.unit.setCurrentIndex(self.unit.findData(unit))
