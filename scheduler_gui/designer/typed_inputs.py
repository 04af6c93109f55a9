"""Inputs a person types into freely, read only as whole texts (see
:mod:`scheduler_gui.designer.field_problem`):

- :class:`CountSpin` and :class:`RatioSpin`: numbers with arrows that stop at
  the smallest allowed value, where a typed 0 stays in the box (to be reported
  under it) instead of Qt silently putting the old value back on focus-out;
- :class:`DateTimeField`: a local date, with or without a time of day, typed
  as text (``2027-03-14 09:30``) or picked on a calendar. Unlike a
  ``QDateTimeEdit``, whose sections commit as they are typed, "2027-02-3" on
  the way to "2027-02-30" is no date at all, and "2027-02-30" says why.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime
from typing import cast

from PySide6.QtCore import QDate, Qt
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCalendarWidget,
    QDoubleSpinBox,
    QHBoxLayout,
    QLineEdit,
    QMenu,
    QSpinBox,
    QToolButton,
    QWidget,
    QWidgetAction,
)

from core.recurrence.describe import MONTH_NAMES
from scheduler_gui.a11y import accessible
from scheduler_gui.designer.zone_picker import tabular

_WALL = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?)?$")


def _body(text: str, prefix: str, suffix: str) -> str:
    """``text`` without the box's prefix and suffix."""
    if prefix and text.startswith(prefix):
        text = text[len(prefix) :]
    if suffix and text.endswith(suffix):
        text = text[: -len(suffix)]
    return text.strip()


class _StopsAtLowest:
    """The arrows, the wheel and Page Up/Down of a number box stop at its ``lowest`` value (typing does not)."""

    lowest: float

    def stepBy(self, steps: int) -> None:
        box = cast(QAbstractSpinBox, self)
        if box.value() + steps * box.singleStep() < self.lowest:  # type: ignore[attr-defined]
            box.setValue(self.lowest)  # type: ignore[attr-defined]
            return
        super().stepBy(steps)  # type: ignore[misc]

    def stepEnabled(self) -> QAbstractSpinBox.StepEnabledFlag:
        flags: QAbstractSpinBox.StepEnabledFlag = super().stepEnabled()  # type: ignore[misc]
        if cast(QAbstractSpinBox, self).value() <= self.lowest:  # type: ignore[attr-defined]
            flags &= ~QAbstractSpinBox.StepEnabledFlag.StepDownEnabled
        return flags


class CountSpin(_StopsAtLowest, QSpinBox):
    """A whole number of at least ``lowest`` (``what`` names it in messages, "the repeat interval").

    The box takes 0 as typed and :meth:`number` says it is too small; the arrows never go below
    ``lowest``.
    """

    def __init__(self, what: str, lowest: int, highest: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.what = what
        self.lowest = lowest
        self.setRange(min(0, lowest), highest)
        self.setFont(tabular(self.font()))

    def number(self, text: str) -> int:
        """The number in ``text`` (the box's whole text); ValueError saying why it is not one."""
        body = _body(text, self.prefix(), self.suffix())
        if not body:
            raise ValueError(f"give {self.what}: a whole number of at least {self.lowest}")
        if not body.isdigit():
            raise ValueError(f"{body!r} is not a whole number; {self.what} is a whole number")
        value = int(body)
        if value < self.lowest:
            raise ValueError(f"{self.what} must be at least {self.lowest}")
        return value


class RatioSpin(_StopsAtLowest, QDoubleSpinBox):
    """A decimal of at least ``lowest``, like :class:`CountSpin` (the retry multiplier)."""

    def __init__(self, what: str, lowest: float, highest: float, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.what = what
        self.lowest = lowest
        self.setRange(0.0, highest)
        self.setFont(tabular(self.font()))

    def number(self, text: str) -> float:
        """The number in ``text`` (the box's whole text); ValueError saying why it is not one."""
        body = _body(text, self.prefix(), self.suffix())
        if not body:
            raise ValueError(f"give {self.what}: a number of at least {self.lowest:g}")
        value, ok = self.locale().toDouble(body)
        if not ok:
            raise ValueError(f"{body!r} is not a number; {self.what} is a number like 2 or 1.5")
        if value < self.lowest:
            raise ValueError(f"{self.what} must be at least {self.lowest:g}")
        return round(value, self.decimals())


# --- dates and times ------------------------------------------------------------------------


def parse_wall(text: str, *, with_time: bool) -> datetime | date:
    """``2027-03-14 09:30`` (or ``…T09:30``, seconds allowed) as a naive datetime, or with
    ``with_time`` false ``2027-03-14`` as a date. ValueError says what is missing or wrong."""
    value = text.strip()
    example = "2027-03-14 09:30" if with_time else "2027-03-14"
    what = "a date and time" if with_time else "a date"
    m = _WALL.fullmatch(value)
    if not value:
        raise ValueError(f"give {what} like {example}")
    if m is None or (m.group(4) is None) == with_time:
        raise ValueError(f"{value!r} is not {what} yet; write it like {example}")
    year, month, day = (int(m.group(i)) for i in (1, 2, 3))
    if year < 1:
        raise ValueError(f"{value!r}: years start at 0001")
    if not 1 <= month <= 12:
        raise ValueError(f"{value!r} is not a date: months are 01 to 12")
    last = calendar.monthrange(year, month)[1]
    if not 1 <= day <= last:
        raise ValueError(f"{value!r} is not a date: {MONTH_NAMES[month]} {year} has {last} days")
    if not with_time:
        return date(year, month, day)
    hour, minute, second = int(m.group(4)), int(m.group(5)), int(m.group(6) or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"{value!r} is not a time of day: hours are 0 to 23, minutes 00 to 59")
    return datetime(year, month, day, hour, minute, second)


def format_wall(value: datetime | date) -> str:
    """``2027-03-14 09:30`` (seconds only when there are some), or ``2027-03-14`` for a date."""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S" if value.second else "%Y-%m-%d %H:%M")
    return value.isoformat()


class DateTimeField(QWidget):
    """A local date (and time) typed as text, with a button that picks the day on a calendar.

    The text is the input: picking a day rewrites the date in it (keeping the time), so what the
    person sees is always what is read. ``edit`` carries the field's accessible name.
    """

    def __init__(self, name: str, tooltip: str, parent: QWidget | None = None, *, with_time: bool = True) -> None:
        super().__init__(parent)
        self.with_time = with_time
        self._shown: datetime | date | None = None
        self._menu: QMenu | None = None
        self.calendar: QCalendarWidget | None = None
        example = "2027-03-14 09:30" if with_time else "2027-03-14"
        self.edit = QLineEdit(self)
        self.edit.setFont(tabular(self.edit.font()))
        self.edit.setPlaceholderText(example)
        accessible(self.edit, name, f"{tooltip}\nType it as {example}, or pick the day with the button beside it.")
        self.edit.setFixedWidth(self.edit.fontMetrics().horizontalAdvance(example + "0:00") + 16)
        self.pick = QToolButton(self)
        self.pick.setArrowType(Qt.ArrowType.DownArrow)
        accessible(self.pick, f"{name}: pick a day", "Pick the day on a calendar")
        self.pick.clicked.connect(self.open_calendar)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.edit)
        layout.addWidget(self.pick)
        self.setFocusProxy(self.edit)

    def parse(self, text: str) -> datetime | date:
        return parse_wall(text, with_time=self.with_time)

    def value(self) -> datetime | date | None:
        """What the text says, or None while it is not a date (and time)."""
        try:
            return self.parse(self.edit.text())
        except ValueError:
            return None

    def set_value(self, value: datetime | date) -> None:
        """Show ``value`` (the caller decides whether that is a change of the field)."""
        self._shown = value
        text = format_wall(value)
        if self.edit.text() != text:
            self.edit.setText(text)

    def open_calendar(self) -> None:
        """Show the calendar under the field, on the day the text (or the last value shown) says."""
        if self._menu is None:
            # Built on first use: a calendar per date field would cost more than it gives.
            self._menu = QMenu(self)
            self.calendar = QCalendarWidget(self._menu)
            self.calendar.setGridVisible(True)
            self.calendar.setAccessibleName("Pick a day")
            self.calendar.clicked.connect(self._picked)
            self.calendar.activated.connect(self._picked)
            action = QWidgetAction(self._menu)
            action.setDefaultWidget(self.calendar)
            self._menu.addAction(action)
        assert self.calendar is not None
        day = self.value() or self._shown
        if day is not None:
            self.calendar.setSelectedDate(QDate(day.year, day.month, day.day))
        self._menu.popup(self.pick.mapToGlobal(self.pick.rect().bottomLeft()))
        self.calendar.setFocus()

    def _picked(self, day: QDate) -> None:
        if self._menu is not None:
            self._menu.close()
        chosen = date(day.year(), day.month(), day.day())
        base = self.value() or self._shown
        value: datetime | date = chosen
        if self.with_time:
            clock = base if isinstance(base, datetime) else datetime.min
            value = datetime.combine(chosen, clock.time())
        self.edit.setText(format_wall(value))  # read like typed text: written, or its problem shown
        self.edit.setFocus()
