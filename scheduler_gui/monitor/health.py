"""Health of the ledger as charts: due-to-start delay, attempts per hour by
outcome, misfires per hour, and the age of the oldest occurrence waiting for a
person. The series come from :func:`core.ledger.health_queries.health`, read
off the GUI thread, and are read again when the ledger changes.

Time runs left to right in hours before now, so nobody has to convert a zone;
the range's ends are written in UTC above the charts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from PySide6.QtCharts import (
    QBarCategoryAxis,
    QBarSeries,
    QBarSet,
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

from core.ledger.attention_queries import attention_ids
from core.ledger.health_queries import HealthSeries, health
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
    view.setAccessibleName(name)
    view.setToolTip(tip)
    view.setMinimumHeight(220)
    return view


def _hours_axis(span: timedelta) -> QValueAxis:
    axis = QValueAxis()
    axis.setRange(-span.total_seconds() / 3600, 0)
    axis.setLabelFormat("%.0f h")
    axis.setTitleText("hours before now")
    return axis


def _count_axis(top: float) -> QValueAxis:
    """A count axis whose ticks fall on whole numbers."""
    axis = QValueAxis()
    high = max(int(top), 1)
    if high <= 8:
        axis.setRange(0, high)
        axis.setTickCount(high + 1)
    else:
        axis.setRange(0, high)
        axis.applyNiceNumbers()
    axis.setLabelFormat("%.0f")
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
        self.range_box.setToolTip("How far back the charts go")
        self.range_box.setAccessibleName("Health range")
        self.range_box.currentIndexChanged.connect(lambda _i: self.reload())
        self.summary = QLabel("Reading the ledger…")
        self.summary.setWordWrap(True)
        self.summary.setAccessibleName("Health summary")
        self.summary.setToolTip("The charts' headline numbers")
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
            _view(self.oldest_chart, "Oldest unresolved chart", "Hours the oldest unresolved occurrence had waited"),
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
            watcher.eventsArrived.connect(lambda _e: self._timer.start())
        self.reload()

    def reload(self) -> None:
        """Read the series again (off the GUI thread)."""
        self._timer.stop()
        now = self._ctx.clock.now()
        span: timedelta = self.range_box.currentData()

        def work() -> _Loaded:
            with self._ctx.ledger.read() as session:
                return _Loaded(health(session, now - span, now, now), len(attention_ids(session)), now)

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
            f"{utc_text(h.start)} → {utc_text(h.end)} · {attempts} attempts · "
            f"median delay {age_text(median)} · {sum(h.misfires)} misfires · "
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
        top = 1.0
        for d in h.delays:
            series.append(self._hours_before(h, d.started_at), d.seconds)
            top = max(top, d.seconds)
        chart.addSeries(series)
        x = _hours_axis(span)
        y = QValueAxis()
        y.setRange(0, top * 1.1)
        y.applyNiceNumbers()
        y.setLabelFormat("%.0f s")
        y.setTitleText("seconds late")
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
        series.setName("age of the oldest waiting (hours)")
        series.setColor(QColor(REDDISH_PURPLE))
        top = 1.0
        for start, age in zip(h.buckets, h.oldest_unresolved, strict=True):
            end = min(start + h.bucket, h.end)
            hours = (age or 0.0) / 3600
            series.append(self._hours_before(h, end), hours)
            top = max(top, hours)
        chart.addSeries(series)
        x = _hours_axis(span)
        y = QValueAxis()
        y.setRange(0, top * 1.1)
        y.applyNiceNumbers()
        y.setLabelFormat("%.0f h")
        y.setTitleText("hours waiting")
        chart.addAxis(x, Qt.AlignmentFlag.AlignBottom)
        chart.addAxis(y, Qt.AlignmentFlag.AlignLeft)
        series.attachAxis(x)
        series.attachAxis(y)
