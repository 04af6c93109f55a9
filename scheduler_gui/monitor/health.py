"""Health of the ledger as charts: due-to-start delay, attempts per hour by
outcome, misfires per hour, and the age of the oldest occurrence waiting for a
person. The series come from :func:`core.ledger.health_queries.health`, read
off the GUI thread, and are read again when the ledger changes.

Time runs left to right in hours before now, so nobody has to convert a zone;
the range's ends are written in UTC above the charts. Value axes take their
ticks from the data's range in whole steps of a unit (0, 500 ms, 1 s, 1.5 s;
0, 15 min, 30 min; 0, 2, 4 for counts), so no two tick labels ever read alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from PySide6.QtCharts import (
    QBarCategoryAxis,
    QBarSeries,
    QBarSet,
    QCategoryAxis,
    QChart,
    QChartView,
    QLineSeries,
    QScatterSeries,
    QStackedBarSeries,
    QValueAxis,
)
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from core.counts import counted
from core.ledger.health_queries import HealthSeries
from core.ledger.monitor_reads import health_outlook
from scheduler_gui.a11y import accessible
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.background import describe_error, ledger_work
from scheduler_gui.monitor.timetext import age_text, utc_text
from scheduler_gui.status_style import GREY, REDDISH_PURPLE, SKY_BLUE, look

RANGES: tuple[tuple[str, timedelta], ...] = (
    ("Last 24 hours", timedelta(hours=24)),
    ("Last 3 days", timedelta(days=3)),
    ("Last 7 days", timedelta(days=7)),
)
DEFAULT_RANGE = 1
REFRESH_DEBOUNCE_MS = 2000
#: The order (and legend) of outcomes in the attempts chart.
_OUTCOMES = ("SUCCEEDED", "RETRY_WAIT", "FAILED", "UNKNOWN_EFFECT", "RUNNING")


@dataclass(frozen=True)
class _Loaded:
    series: HealthSeries
    waiting: int
    now: datetime


def _chart(title: str) -> QChart:
    chart = QChart()
    chart.setTitle(title)
    chart.setAnimationOptions(QChart.AnimationOption.NoAnimation)
    chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
    chart.setBackgroundVisible(False)
    return chart


def _view(chart: QChart, name: str, tip: str) -> QChartView:
    view = QChartView(chart)
    view.setRenderHint(QPainter.RenderHint.Antialiasing)
    accessible(view, name, tip)
    view.setMinimumHeight(220)
    return view


def _hours_axis(span: timedelta) -> QValueAxis:
    axis = QValueAxis()
    axis.setRange(-span.total_seconds() / 3600, 0)
    axis.setLabelFormat("%.0f h")
    axis.setTitleText("hours before now")
    return axis


#: Tick steps for durations, in seconds: each a whole number of its unit (or of half, a quarter of one).
DURATION_STEPS: tuple[float, ...] = (
    *(0.001 * n for n in (1, 2, 5, 10, 20, 50, 100, 200, 250, 500)),
    *(1, 2, 5, 10, 15, 30),
    *(60 * n for n in (1, 2, 5, 10, 15, 30)),
    *(3600 * n for n in (1, 2, 3, 6, 12)),
    *(86400 * n for n in (1, 2, 7, 14, 28)),
)
#: At most this many intervals on a value axis.
MOST_TICKS = 6


def count_steps() -> Sequence[float]:
    """1, 2, 5, 10, 20, 50, ...: whole numbers only."""
    return [m * 10**e for e in range(0, 10) for m in (1, 2, 5)]


def ticks(top: float, steps: Sequence[float], most: int = MOST_TICKS) -> list[float]:
    """0, step, 2 × step ... up to the first tick at or above ``top``, with the smallest
    step that needs at most ``most`` intervals (an empty chart gets 0 and one step)."""
    top = max(float(top), 0.0)
    step = next((s for s in steps if top <= s * most), None)
    if step is None:  # beyond the table: whole multiples of its last step
        step = steps[-1] * math.ceil(top / (steps[-1] * most))
    intervals = max(1, math.ceil(top / step - 1e-9))
    return [round(i * step, 6) for i in range(intervals + 1)]


def duration_label(seconds: float) -> str:
    """A tick's duration in words: ``0``, ``250 ms``, ``1.5 s``, ``2 min 30 s``, ``1 h 30 min``, ``2 d 12 h``.
    Exact for every multiple of a DURATION_STEPS step, so distinct ticks never read alike."""
    if seconds <= 0:
        return "0"
    if seconds < 1:
        return f"{round(seconds * 1000):d} ms"
    if seconds < 60:
        return f"{round(seconds, 3):g} s"
    whole = round(seconds)
    if whole < 3600:
        minutes, rest = divmod(whole, 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    if whole < 86400:
        hours, rest = divmod(whole, 3600)
        return f"{hours} h {rest // 60:02d} min" if rest else f"{hours} h"
    days, rest = divmod(whole, 86400)
    return f"{days} d {rest // 3600} h" if rest else f"{days} d"


def count_label(value: float) -> str:
    return f"{round(value):d}"


def value_axis(top: float, steps: Sequence[float], label: Callable[[float], str]) -> QCategoryAxis:
    """A value axis from 0 with ticks chosen from the data's range, each labelled at its value."""
    axis = QCategoryAxis()
    marks = ticks(top, steps)
    axis.setStartValue(0)
    for value in marks:
        axis.append(label(value), value)
    axis.setRange(0, marks[-1])
    axis.setLabelsPosition(QCategoryAxis.AxisLabelsPosition.AxisLabelsPositionOnValue)
    return axis


def _count_axis(top: float) -> QCategoryAxis:
    """A count axis whose ticks fall on whole numbers."""
    return value_axis(top, count_steps(), count_label)


def _duration_axis(top: float, title: str) -> QCategoryAxis:
    axis = value_axis(top, DURATION_STEPS, duration_label)
    axis.setTitleText(title)
    return axis


class HealthView(QWidget):
    """Four charts over a chosen range, with the headline numbers in words above them."""

    loaded = Signal()
    errorOccurred = Signal(str)

    def __init__(self, ctx: AppContext, watcher: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("healthView")
        self._ctx = ctx
        self._background = LatestOnly(self, describe=describe_error)
        self._background.done.connect(self._show)
        self._background.failed.connect(self._failed)
        self.latest: HealthSeries | None = None
        self.range_box = QComboBox()
        for label, span in RANGES:
            self.range_box.addItem(label, span)
        self.range_box.setCurrentIndex(DEFAULT_RANGE)
        accessible(self.range_box, "Health range", "How far back the charts go")
        self.range_box.currentIndexChanged.connect(lambda _i: self.reload())
        self.summary = QLabel("Reading the ledger…")
        self.summary.setWordWrap(True)
        accessible(self.summary, "Health summary", "The charts' headline numbers")
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {look('FAILED').colour};")
        self.error_label.setAccessibleName("Ledger problem")
        self.error_label.hide()

        self.delay_chart = _chart("Due-to-start delay (first attempts)")
        self.attempts_chart = _chart("Attempts per hour, by outcome")
        self.misfire_chart = _chart("Misfires per hour (expired, by due hour)")
        self.oldest_chart = _chart("Oldest occurrence waiting for a person")
        grid = QGridLayout()
        grid.addWidget(
            _view(
                self.delay_chart, "Due-to-start delay chart", "Seconds between due time and start, per first attempt"
            ),
            0,
            0,
        )
        grid.addWidget(
            _view(self.attempts_chart, "Attempts per hour chart", "Attempts started each hour, stacked by outcome"),
            0,
            1,
        )
        grid.addWidget(
            _view(self.misfire_chart, "Misfires chart", "Occurrences expired by the misfire policy, by due hour"), 1, 0
        )
        grid.addWidget(
            _view(self.oldest_chart, "Oldest unresolved chart", "How long the oldest unresolved occurrence had waited"),
            1,
            1,
        )
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.range_box)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.error_label)
        layout.addLayout(grid, 1)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_DEBOUNCE_MS)
        self._timer.timeout.connect(self.reload)
        if watcher is not None:
            # A bound method, not a lambda: Qt drops the connection when this page is deleted.
            watcher.eventsArrived.connect(self._on_events)
        self.reload()

    def _on_events(self, _events: object) -> None:
        self._timer.start()

    def reload(self) -> None:
        """Read the series again (off the GUI thread)."""
        self._timer.stop()
        now = self._ctx.clock.now()
        span: timedelta = self.range_box.currentData()

        def work() -> _Loaded:
            found = health_outlook(self._ctx.ledger, now - span, now, now)
            return _Loaded(found.series, found.waiting, now)

        self._background.submit(ledger_work(work))

    def refresh(self) -> None:
        """Read the series again (F5)."""
        self.reload()

    def wait(self, msecs: int = 30_000) -> bool:
        return self._background.wait(msecs)

    def _failed(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()
        self.errorOccurred.emit(message)

    def _show(self, loaded: _Loaded) -> None:
        self.error_label.hide()
        h = loaded.series
        self.latest = h
        span = h.end - h.start
        attempts = sum(sum(v) for v in h.attempts.values())
        delays = sorted(d.seconds for d in h.delays)
        median = delays[len(delays) // 2] if delays else None
        self.summary.setText(
            f"{utc_text(h.start)} → {utc_text(h.end)} · {counted(attempts, 'attempt')} · "
            f"median delay {age_text(median)} · {counted(sum(h.misfires), 'misfire')} · "
            f"{loaded.waiting} waiting for a person, the oldest for {age_text(h.oldest_unresolved_now)}"
        )
        self._delays(h, span)
        self._attempts(h)
        self._misfires(h)
        self._oldest(h, span)
        self.loaded.emit()

    def _hours_before(self, h: HealthSeries, at: datetime) -> float:
        return (at - h.end).total_seconds() / 3600

    def _delays(self, h: HealthSeries, span: timedelta) -> None:
        chart = self.delay_chart
        chart.removeAllSeries()
        for axis in chart.axes():
            chart.removeAxis(axis)
        series = QScatterSeries()
        series.setName("first attempts")
        series.setMarkerSize(7)
        series.setColor(QColor(SKY_BLUE))
        top = 0.0
        for d in h.delays:
            series.append(self._hours_before(h, d.started_at), d.seconds)
            top = max(top, d.seconds)
        chart.addSeries(series)
        x = _hours_axis(span)
        y = _duration_axis(top, "late by")
        chart.addAxis(x, Qt.AlignmentFlag.AlignBottom)
        chart.addAxis(y, Qt.AlignmentFlag.AlignLeft)
        series.attachAxis(x)
        series.attachAxis(y)

    def _bars(self, chart: QChart, series: QBarSeries | QStackedBarSeries, n: int, top: float, h: HealthSeries) -> None:
        chart.removeAllSeries()
        for axis in chart.axes():
            chart.removeAxis(axis)
        chart.addSeries(series)
        x = QBarCategoryAxis()
        x.append([f"{i}" for i in range(n)])
        x.setLabelsVisible(False)
        x.setTitleText(f"one bar per hour, {utc_text(h.start)} → {utc_text(h.end)}")
        y = _count_axis(top)
        chart.addAxis(x, Qt.AlignmentFlag.AlignBottom)
        chart.addAxis(y, Qt.AlignmentFlag.AlignLeft)
        series.attachAxis(x)
        series.attachAxis(y)

    def _attempts(self, h: HealthSeries) -> None:
        n = len(h.misfires)
        series = QStackedBarSeries()
        totals = [0] * n
        text = self.palette().color(QPalette.ColorRole.Text)
        for outcome in _OUTCOMES:
            counts = h.attempts.get(outcome)
            if not counts:
                continue
            style = look(outcome)
            bar = QBarSet(style.label)
            bar.append([float(c) for c in counts])
            bar.setColor(QColor(style.colour) if style.colour else text)
            bar.setBorderColor(QColor(style.colour) if style.colour else text)
            series.append(bar)
            totals = [a + b for a, b in zip(totals, counts, strict=True)]
        series.setBarWidth(1.0)
        self._bars(self.attempts_chart, series, n, max(totals, default=0), h)

    def _misfires(self, h: HealthSeries) -> None:
        series = QBarSeries()
        bar = QBarSet(look("MISFIRE_EXPIRED").label)
        bar.append([float(c) for c in h.misfires])
        bar.setColor(QColor(GREY))
        series.append(bar)
        series.setBarWidth(1.0)
        self._bars(self.misfire_chart, series, len(h.misfires), max(h.misfires, default=0), h)

    def _oldest(self, h: HealthSeries, span: timedelta) -> None:
        chart = self.oldest_chart
        chart.removeAllSeries()
        for axis in chart.axes():
            chart.removeAxis(axis)
        series = QLineSeries()
        series.setName("age of the oldest waiting")
        series.setColor(QColor(REDDISH_PURPLE))
        top = 0.0
        for start, age in zip(h.buckets, h.oldest_unresolved, strict=True):
            end = min(start + h.bucket, h.end)
            series.append(self._hours_before(h, end), age or 0.0)
            top = max(top, age or 0.0)
        chart.addSeries(series)
        x = _hours_axis(span)
        y = _duration_axis(top, "waiting")
        chart.addAxis(x, Qt.AlignmentFlag.AlignBottom)
        chart.addAxis(y, Qt.AlignmentFlag.AlignLeft)
        series.attachAxis(x)
        series.attachAxis(y)
