"""The Engines page of the monitor: every engine seen on this ledger, with its
labels, OS user, version, when it was last seen (live or stale), what it runs
now and what it refuses, with the reason (:mod:`.engines_model`)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from core.desktop.wake.listing import alarm_lines
from core.desktop.wake.probe import host_backend
from scheduler_gui.a11y import accessible
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.engines_model import REFRESH_EVERY_MS, EnginesModel
from scheduler_gui.monitor.ledger_table import TablePage
from scheduler_gui.status_style import look

#: Starting widths of the columns before the last (which stretches).
_WIDTHS = (170, 100, 90, 90, 260, 130)


class EnginesView(TablePage, QWidget):
    """The engines table: each engine's row, and beneath it a line across the table with what it runs
    and refuses (one line each). A long list scrolls."""

    table: QTableView

    def __init__(self, ctx: AppContext, watcher: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("enginesView")
        self.model = EnginesModel(ctx, self)
        self.model.follow(watcher)
        self.intro = QLabel(
            "Every engine that has run on this ledger. A schedule runs only on an engine whose labels match its"
            " runsOn and that trusts its publisher; what an engine refuses is listed with the reason."
        )
        self.intro.setWordWrap(True)
        self.intro.setAccessibleName("About engines")
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setTabKeyNavigation(False)  # arrows move within it; Tab goes on to the next control
        accessible(
            self.table,
            "Engines",
            "The engines seen on this ledger: where each runs, whether it is live, its labels and user,"
            " what it runs now and what it refuses",
        )
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.table.setWordWrap(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        for column, width in enumerate(_WIDTHS):
            self.table.setColumnWidth(column, width)
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {look('FAILED').colour};")
        self.error_label.setAccessibleName("Ledger problem")
        self.error_label.hide()
        self.empty_label = QLabel(
            "No engine has run on this ledger yet: start the window's engine (Engine ▸ Start Engine)"
            " or run schedctl engine run."
        )
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setAccessibleName("No engines yet")
        self.empty_label.hide()
        self.wake_alarms = QLabel("Wake alarms: reading…")
        self.wake_alarms.setWordWrap(True)
        self.wake_alarms.setTextFormat(Qt.TextFormat.PlainText)
        accessible(
            self.wake_alarms, "Wake alarms", "The alarms armed on this computer to wake it for runs (wakeSystem)"
        )
        self._ctx = ctx
        self._alarms = LatestOnly(self)
        self._alarms.done.connect(self._show_alarms)
        self._alarms.failed.connect(self.wake_alarms.setText)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.error_label)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.empty_label, 1)
        layout.addWidget(self.wake_alarms)
        # Heartbeats write no event and "last seen" ages: read again now and then while shown.
        self.ticker = QTimer(self)
        self.ticker.setInterval(REFRESH_EVERY_MS)
        self.ticker.timeout.connect(self.refresh)
        self.model.loaded.connect(self._on_loaded)
        self.model.errorOccurred.connect(self.show_problem)
        self.refresh()

    def refresh(self) -> None:
        """Read the engines and this computer's wake alarms again (F5, and every few seconds while shown)."""
        self.model.reload()
        zone = self._ctx.machine_zone()
        self._alarms.submit(lambda: alarm_lines(host_backend(), zone))

    def _show_alarms(self, lines: object) -> None:
        assert isinstance(lines, list)
        self.wake_alarms.setText("\n".join(lines))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.ticker.start()

    def hideEvent(self, event: QHideEvent) -> None:
        self.ticker.stop()
        super().hideEvent(event)

    def _on_loaded(self) -> None:
        self.table.clearSpans()
        for row in range(1, self.model.rowCount(), 2):
            self.table.setSpan(row, 0, 1, self.model.columnCount())
        self.show_loaded()
