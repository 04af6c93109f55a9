"""The schedules table of the monitor, with a sparkline of recent results per schedule."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from scheduler_gui.a11y import accessible
from scheduler_gui.context import AppContext
from scheduler_gui.elide import WholeWordsDelegate
from scheduler_gui.monitor.ledger_table import TablePage
from scheduler_gui.monitor.schedules_model import COLUMNS, SPARK_LENGTH, MarksRole, ScheduleIdRole, SchedulesModel
from scheduler_gui.status_style import look

MARK = 8
GAP = 3


class SparklineDelegate(QStyledItemDelegate):
    """Small marks in status colours, the newest on the right; hollow for runs that never happened."""

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        states = index.data(MarksRole) or []
        widget = option.widget
        if widget is not None and option.state & QStyle.StateFlag.State_Selected:
            widget.style().drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, widget)
        rect = option.rect
        palette: QPalette = option.palette
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        x = rect.left() + 4
        y = rect.center().y() - MARK / 2
        for state in states:
            style = look(str(state))
            colour = QColor(style.colour) if style.colour else palette.color(QPalette.ColorRole.Text)
            painter.setPen(QPen(colour, 1.5))
            painter.setBrush(Qt.BrushStyle.NoBrush if style.hollow else colour)
            box = QRectF(x, y, MARK, MARK)
            if state in ("FAILED", "UNKNOWN_EFFECT"):
                painter.drawRect(box)  # a different shape, not only a different colour
            else:
                painter.drawEllipse(box)
            x += MARK + GAP
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return QSize(SPARK_LENGTH * (MARK + GAP) + 8, MARK + 8)


class SchedulesView(TablePage, QWidget):
    """Every schedule in the ledger: state, next run, last outcome, counts and recent results."""

    scheduleSelected = Signal(str)

    def __init__(self, ctx: AppContext, watcher: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("schedulesView")
        self.model = SchedulesModel(ctx, self)
        self.model.follow(watcher)
        self.table = QTableView()
        self.table.setTabKeyNavigation(False)  # arrows move within it; Tab goes on to the next control
        self.table.setModel(self.model)
        accessible(self.table, "Schedules", "The ledger's schedules; select one to see its occurrences")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.setItemDelegateForColumn(6, SparklineDelegate(self.table))
        self.table.setItemDelegateForColumn(COLUMNS.index("Last outcome"), WholeWordsDelegate(self.table))
        self.table.horizontalHeader().setStretchLastSection(True)
        for column, width in enumerate((230, 100, 250, 140, 150, 220)):
            self.table.setColumnWidth(column, width)
        self.table.selectionModel().currentRowChanged.connect(self._row_changed)
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {look('FAILED').colour};")
        self.error_label.setAccessibleName("Ledger problem")
        self.error_label.hide()
        self.empty_label = QLabel("No schedules in the ledger yet: open one in the designer and publish it.")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.error_label)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.empty_label, 1)
        self.model.loaded.connect(self.show_loaded)
        self.model.errorOccurred.connect(self.show_problem)
        self.model.reload()

    def refresh(self) -> None:
        """Read the schedules again (F5)."""
        self.model.reload()

    def _row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        sid = current.siblingAtColumn(0).data(ScheduleIdRole) if current.isValid() else None
        if sid:
            self.scheduleSelected.emit(str(sid))
