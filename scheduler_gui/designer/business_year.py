"""The year view of the "Business days" section: twelve small months with the calendar's closed
days marked, and each marked day's reason in its tooltip ("Thu 2027-11-25: Thanksgiving Day in
US-NY").

A public holiday is a filled disc, a closed date of your own a ring, a weekend day grey and a date
open despite the rest underlined; the legend under the months says so (colour is never the only
signal). The marks are the calendar's own data: the codes' holidays as
:func:`core.calendar.holiday_codes.closed_days` lists them, the weekend, ``closed`` and ``open``.
"""

from __future__ import annotations

import calendar as month_grid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from typing import Any

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QHelpEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolButton, QToolTip, QVBoxLayout, QWidget

from core.calendar.holiday_codes import closed_days, code_info
from core.spec.model import WEEKDAY_CODES
from scheduler_gui.a11y import accessible
from scheduler_gui.designer.business_state import items, weekend_of
from scheduler_gui.designer.notes import meaning_label
from scheduler_gui.status_style import BLUISH_GREEN, GREY, VERMILLION

#: Months per row of the view, and the size of one day's cell.
MONTHS_PER_ROW = 6
#: Months to a row where the window is narrow (1024 px).
NARROW_MONTHS_PER_ROW = 4
CELL = QSize(20, 17)
_MONTH_GAP = 14
_HEADER_ROWS = 2  # the month's name, then the weekday letters
LEGEND = "● public holiday · ○ your closed date · grey: weekend · underlined: open despite the rest"


class Mark(StrEnum):
    HOLIDAY = "holiday"
    CLOSED = "closed"
    WEEKEND = "weekend"
    OPEN = "open"


@dataclass(frozen=True)
class DayMark:
    mark: Mark
    why: str


def year_marks(calendar: Mapping[str, Any], year: int) -> dict[date, DayMark]:
    """The marked days of ``year`` under the calendar mapping (as the document holds it)."""
    marks: dict[date, DayMark] = {}
    weekend = {WEEKDAY_CODES.index(code) for code in weekend_of(calendar) if code in WEEKDAY_CODES}
    for day in (date(year, 1, 1).toordinal() + i for i in range(366)):
        found = date.fromordinal(day)
        if found.year == year and found.weekday() in weekend:
            marks[found] = DayMark(Mark.WEEKEND, "weekend")
    for text in items(calendar.get("closed")):
        day_ = _date(text)
        if day_ is not None and day_.year == year:
            marks[day_] = DayMark(Mark.CLOSED, "your closed date")
    for code in items(calendar.get("holidays")):
        if code_info(code) is None:
            continue
        for day_, name in closed_days(code, year).items():
            earlier = marks.get(day_)
            why = f"{name} in {code}"  # the preview's words (core.calendar.business_days)
            if earlier is not None and earlier.mark is Mark.HOLIDAY:
                why = f"{earlier.why}; {why}"
            marks[day_] = DayMark(Mark.HOLIDAY, why)
    for text in items(calendar.get("open")):
        day_ = _date(text)
        if day_ is not None and day_.year == year:
            was = marks.get(day_)
            despite = f" despite {was.why}" if was is not None else ""
            marks[day_] = DayMark(Mark.OPEN, f"open{despite} (a business day)")
    return marks


def _date(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def counts_text(marks: Mapping[date, DayMark]) -> str:
    """ "11 public holidays, 1 closed date, 104 weekend days, 1 open date" (what is there)."""
    words = {
        Mark.HOLIDAY: ("public holiday", "public holidays"),
        Mark.CLOSED: ("closed date", "closed dates"),
        Mark.WEEKEND: ("weekend day", "weekend days"),
        Mark.OPEN: ("open date", "open dates"),
    }
    parts = []
    for mark, (one, many) in words.items():
        n = sum(1 for m in marks.values() if m.mark is mark)
        if n:
            parts.append(f"{n} {one if n == 1 else many}")
    return ", ".join(parts) or "no closed days"


class MonthsGrid(QWidget):
    """The twelve months of one year, painted, with a tooltip per marked day."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.year = date.today().year
        self.marks: dict[date, DayMark] = {}
        self.per_row = MONTHS_PER_ROW
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setFixedSize(self.sizeHint())

    def set_per_row(self, per_row: int) -> None:
        """Lay the months out ``per_row`` to a row (fewer in a narrow window)."""
        if per_row != self.per_row:
            self.per_row = per_row
            self.setFixedSize(self.sizeHint())
            self.update()

    def sizeHint(self) -> QSize:
        month = self._month_size()
        per_row = self.per_row
        rows = (12 + per_row - 1) // per_row
        return QSize(
            per_row * month.width() + (per_row - 1) * _MONTH_GAP,
            rows * month.height() + (rows - 1) * _MONTH_GAP // 2,
        )

    @staticmethod
    def _month_size() -> QSize:
        return QSize(7 * CELL.width(), (6 + _HEADER_ROWS) * CELL.height())

    def show_year(self, year: int, marks: dict[date, DayMark]) -> None:
        self.year, self.marks = year, marks
        self.update()

    def _month_origin(self, month: int) -> QPoint:
        size = self._month_size()
        col, row = (month - 1) % self.per_row, (month - 1) // self.per_row
        return QPoint(col * (size.width() + _MONTH_GAP), row * (size.height() + _MONTH_GAP // 2))

    def day_rect(self, day: date) -> QRect:
        """Where ``day`` is drawn (its cell)."""
        origin = self._month_origin(day.month)
        first = date(day.year, day.month, 1).weekday()
        index = first + day.day - 1
        x = origin.x() + (index % 7) * CELL.width()
        y = origin.y() + (_HEADER_ROWS + index // 7) * CELL.height()
        return QRect(QPoint(x, y), CELL)

    def day_at(self, point: QPoint) -> date | None:
        """The day whose cell holds ``point``, or None."""
        for month in range(1, 13):
            origin = self._month_origin(month)
            if not QRect(origin, self._month_size()).contains(point):
                continue
            for number in range(1, month_grid.monthrange(self.year, month)[1] + 1):
                day = date(self.year, month, number)
                if self.day_rect(day).contains(point):
                    return day
        return None

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        font = painter.font()
        font.setPointSizeF(max(6.5, font.pointSizeF() * 0.8))
        painter.setFont(font)
        for month in range(1, 13):
            self._paint_month(painter, month)
        painter.end()

    def _paint_month(self, painter: QPainter, month: int) -> None:
        palette = self.palette()
        text = palette.color(QPalette.ColorRole.Text)
        origin = self._month_origin(month)
        title = QRect(origin, QSize(7 * CELL.width(), CELL.height()))
        bold = painter.font()
        bold.setBold(True)
        painter.save()
        painter.setFont(bold)
        painter.setPen(text)
        painter.drawText(title, Qt.AlignmentFlag.AlignCenter, date(self.year, month, 1).strftime("%B"))
        painter.restore()
        painter.setPen(QColor(GREY))
        for i, code in enumerate(WEEKDAY_CODES):
            cell = QRect(origin + QPoint(i * CELL.width(), CELL.height()), CELL)
            painter.drawText(cell, Qt.AlignmentFlag.AlignCenter, code[0])
        for number in range(1, month_grid.monthrange(self.year, month)[1] + 1):
            day = date(self.year, month, number)
            self._paint_day(painter, day, self.marks.get(day), text)

    def _paint_day(self, painter: QPainter, day: date, mark: DayMark | None, text: QColor) -> None:
        cell = self.day_rect(day)
        disc = cell.adjusted(2, 0, -2, 0)
        disc.setWidth(min(disc.width(), disc.height()) + 2)
        disc.moveCenter(cell.center())
        pen = text
        if mark is not None and mark.mark is Mark.HOLIDAY:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(VERMILLION))
            painter.drawEllipse(disc)
            pen = QColor("white")
        elif mark is not None and mark.mark is Mark.CLOSED:
            painter.setPen(QColor(VERMILLION))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawEllipse(disc)
        elif mark is not None and mark.mark is Mark.WEEKEND:
            pen = QColor(GREY)
        elif mark is not None and mark.mark is Mark.OPEN:
            painter.setPen(QColor(BLUISH_GREEN))
            painter.drawLine(disc.bottomLeft(), disc.bottomRight())
        painter.setPen(pen)
        painter.drawText(cell, Qt.AlignmentFlag.AlignCenter, str(day.day))

    def tip_at(self, point: QPoint) -> str | None:
        """The tooltip of the day under ``point``: the day and why it is marked."""
        day = self.day_at(point)
        if day is None:
            return None
        mark = self.marks.get(day)
        return f"{day:%a} {day.isoformat()}: {mark.why if mark else 'a business day'}"

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            tip = self.tip_at(event.pos())
            if tip:
                QToolTip.showText(event.globalPos(), tip, self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)


class YearView(QWidget):
    """The year's months with the year's name between "previous" and "next" buttons, and the legend."""

    def __init__(self, year: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._calendar: dict[str, Any] = {}
        self.year = year
        #: True once the person turned the year: the preview's year no longer moves it.
        self.turned = False
        self.previous = QToolButton(self)
        self.previous.setArrowType(Qt.ArrowType.LeftArrow)
        accessible(self.previous, "Year view: previous year", "Show the year before")
        self.next = QToolButton(self)
        self.next.setArrowType(Qt.ArrowType.RightArrow)
        accessible(self.next, "Year view: next year", "Show the year after")
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)  # a heading, not the buttons' label
        self.title.setAccessibleName("Year view: year")
        self.grid = MonthsGrid(self)
        self.grid.setAccessibleName("Year view")
        self.legend = meaning_label(self, "Year view: legend")
        self.legend.setText(LEGEND)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.previous)
        head.addWidget(self.title)
        head.addWidget(self.next)
        head.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        layout.addLayout(head)
        layout.addWidget(self.grid)
        layout.addWidget(self.legend)
        self.previous.clicked.connect(lambda: self._turn(-1))
        self.next.clicked.connect(lambda: self._turn(1))

    def _turn(self, step: int) -> None:
        self.turned = True
        self.show_year(self.year + step)

    def follow(self, year: int) -> None:
        """Show the preview's ``year``, unless the person turned to another one."""
        if not self.turned and year != self.year:
            self.show_year(year)

    def show_calendar(self, calendar: Mapping[str, Any]) -> None:
        """Mark the days of ``calendar`` (the document's mapping) in the year shown."""
        self._calendar = dict(calendar)
        self.show_year(self.year)

    def show_year(self, year: int) -> None:
        self.year = year
        marks = year_marks(self._calendar, year)
        counts = counts_text(marks)
        self.title.setText(f"<b>{year}</b>: {counts}")
        self.grid.setAccessibleDescription(f"{year}: {counts}. Hover a day for its reason.")
        self.grid.show_year(year, marks)
