"""The occurrences table: a filter bar over a virtual table of the whole ledger.

Only the rows on screen are read (:class:`OccurrencesModel` fetches by page);
the filter bar narrows by schedule, state, time, kind (scheduled, manual runs,
backfills) and text, newest first. The table opens at now: the next occurrences
due at the top, a line at now, the latest that came due or ran below it; Now
scrolls back there. Selecting a row emits :attr:`OccurrencesView.occurrenceSelected`,
which the window connects to the detail panel.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.ledger.occurrence_pages import Order
from core.ledger.queries import OccurrenceFilter
from core.ledger.states import OccurrenceKind, OccurrenceState
from scheduler_gui.a11y import accessible
from scheduler_gui.context import AppContext
from scheduler_gui.elide import WholeWordsDelegate
from scheduler_gui.monitor.occurrences_model import COLUMNS, NowEdgeRole, OccurrenceIdRole, OccurrencesModel, StateRole
from scheduler_gui.status_style import look

_S = OccurrenceState

#: The state filter's choices: a label and the states it keeps (None: any).
STATE_CHOICES: tuple[tuple[str, frozenset[OccurrenceState] | None], ...] = (
    ("Any state", None),
    ("Needs attention", frozenset({_S.UNKNOWN_EFFECT, _S.FAILED})),
    ("Waiting (planned, due, retry)", frozenset({_S.PLANNED, _S.DUE, _S.RETRY_WAIT})),
    ("Running", frozenset({_S.DISPATCHING, _S.RUNNING})),
    (
        "Not run (skipped, expired, cancelled)",
        frozenset(
            {
                _S.SKIPPED_GAP,
                _S.SKIPPED_FOLD,
                _S.SKIPPED_DUPLICATE,
                _S.SKIPPED_OVERLAP,
                _S.EXCLUDED,
                _S.MISFIRE_EXPIRED,
                _S.CANCELLED,
            }
        ),
    ),
    *((look(s.value).label, frozenset({s})) for s in OccurrenceState),
)

#: The time filter's choices: a label and the window around now (None: any time).
TIME_CHOICES: tuple[tuple[str, tuple[timedelta, timedelta] | None], ...] = (
    ("Any time", None),
    ("Past 24 hours", (timedelta(hours=-24), timedelta(0))),
    ("Past 7 days", (timedelta(days=-7), timedelta(0))),
    ("Past 30 days", (timedelta(days=-30), timedelta(0))),
    ("Next 24 hours", (timedelta(0), timedelta(hours=24))),
    ("Next 7 days", (timedelta(0), timedelta(days=7))),
)

#: The kind filter's choices: a label and the kind it keeps (None: any).
KIND_CHOICES: tuple[tuple[str, OccurrenceKind | None], ...] = (
    ("Any kind", None),
    ("Scheduled runs", OccurrenceKind.SCHEDULED),
    ("Manual runs (Run Now)", OccurrenceKind.MANUAL),
    ("Backfills", OccurrenceKind.BACKFILL),
)

TEXT_DEBOUNCE_MS = 300
#: show_only looks for the occurrence among this many first rows (its id filter leaves one or a few).
OPENING_SEARCH = 50
#: Expired ranges listed under the table at most (the rest are counted).
RANGE_LINES = 3


class NowLineDelegate(QStyledItemDelegate):
    """Paints a cell, and the line that marks now across the table: at the top of the
    row now falls before, or under the last row when now is past every one."""

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().paint(painter, option, index)
        self.paint_now(painter, option, index)

    @staticmethod
    def paint_now(painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        edge = index.data(NowEdgeRole)
        if not edge:
            return
        rect = option.rect
        y = rect.top() + 1 if edge == "top" else rect.bottom() - 1
        painter.save()
        painter.setPen(QPen(option.palette.color(QPalette.ColorRole.Highlight), 2))
        painter.drawLine(rect.left(), y, rect.right(), y)
        painter.restore()


class OutcomeDelegate(WholeWordsDelegate):
    """The last outcome cut at a word's end (its whole text in the tooltip), with the line at now."""

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().paint(painter, option, index)
        NowLineDelegate.paint_now(painter, option, index)


class StateChipDelegate(NowLineDelegate):
    """Paints a state as a chip: glyph and word on a tint of the state's colour, hollow for states that never ran."""

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        state = index.data(StateRole)
        if not state:
            super().paint(painter, option, index)
            return
        style_look = look(str(state))
        self.initStyleOption(option, index)
        widget = option.widget
        style = widget.style() if widget is not None else None
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if style is not None and selected:
            style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, widget)
        rect = QRectF(option.rect).adjusted(3, 3, -3, -3)
        palette: QPalette = option.palette
        colour = QColor(style_look.colour) if style_look.colour else palette.color(QPalette.ColorRole.Text)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        fill = QColor(colour)
        fill.setAlpha(0 if style_look.hollow else 40)
        painter.setBrush(fill)
        pen_colour = QColor(colour)
        painter.setPen(pen_colour)
        painter.drawRoundedRect(rect, rect.height() / 2, rect.height() / 2)
        painter.setPen(palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text))
        painter.drawText(
            rect.adjusted(8, 0, -4, 0), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, style_look.label
        )
        painter.restore()
        self.paint_now(painter, option, index)


class OccurrencesView(QWidget):
    """The filter bar and the table of occurrences."""

    occurrenceSelected = Signal(str)
    """The id of the occurrence the person selected."""

    def __init__(self, ctx: AppContext, watcher: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("occurrencesView")
        self._ctx = ctx
        self.model = OccurrencesModel(ctx, self)
        self.model.follow(watcher)

        self.schedule_box = QComboBox()
        self.schedule_box.addItem("All schedules", None)
        accessible(self.schedule_box, "Schedule filter", "Show the occurrences of one schedule")
        self.state_box = QComboBox()
        for label, states in STATE_CHOICES:
            self.state_box.addItem(label, states)
        accessible(self.state_box, "State filter", "Show occurrences in these states")
        self.time_box = QComboBox()
        for label, window in TIME_CHOICES:
            self.time_box.addItem(label, window)
        accessible(self.time_box, "Time range filter", "Show occurrences scheduled in this window around now")
        self.time_field_box = QComboBox()
        self.time_field_box.addItem("by scheduled time", "scheduled")
        self.time_field_box.addItem("by due time", "due")
        accessible(
            self.time_field_box,
            "Time range applies to",
            "Which time the range applies to: when it is scheduled, or when it is due to start (with jitter)",
        )
        self.text_edit = QLineEdit()
        self.text_edit.setPlaceholderText("Id or reason contains…")
        self.text_edit.setClearButtonEnabled(True)
        accessible(self.text_edit, "Text filter", "Show occurrences whose id or reason contains this text (Ctrl+F)")
        self.kind_box = QComboBox()
        for label, kind in KIND_CHOICES:
            self.kind_box.addItem(label, kind)
        accessible(
            self.kind_box,
            "Kind filter",
            "Show every occurrence, or only the scheduled ones, the manual runs a person asked for (Run Now), "
            "or the backfills",
        )
        self.now_button = QPushButton("Now")
        accessible(
            self.now_button,
            "Go to now",
            "Scroll back to now: the next occurrences due above the line, the latest that came due or ran below it",
        )
        self.order_box = QComboBox()
        self.order_box.addItem("Newest first", Order.NEWEST_FIRST)
        self.order_box.addItem("Oldest first", Order.OLDEST_FIRST)
        accessible(self.order_box, "Order", "Order by scheduled time")
        self.count_label = QLabel("Reading the ledger…")
        accessible(
            self.count_label,
            "Number of occurrences shown",
            "How many occurrences match the filter, and how many of them come after now",
        )
        self.error_label = QLabel()
        self.error_label.setObjectName("errorLabel")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {look('FAILED').colour};")
        self.error_label.setAccessibleName("Ledger problem")
        self.error_label.hide()

        self._size_boxes()
        self.text_edit.setMinimumWidth(120)
        # Two rows, in reading (and tab) order: what to show, then the text to find and the order.
        bar = QVBoxLayout()
        first, second = QHBoxLayout(), QHBoxLayout()
        for w in (self.schedule_box, self.state_box, self.time_box, self.time_field_box):
            first.addWidget(w, 1)
        second.addWidget(self.text_edit, 1)
        second.addWidget(self.kind_box)
        second.addWidget(self.order_box)
        second.addWidget(self.now_button)
        bar.addLayout(first)
        bar.addLayout(second)

        self.table = QTableView()
        self.table.setTabKeyNavigation(False)  # arrows move within it; Tab goes on to the next control
        self.table.setObjectName("occurrencesTable")
        self.table.setModel(self.model)
        accessible(
            self.table, "Occurrences", "Every occurrence in the ledger; select one to see why it exists and how it ran"
        )
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setItemDelegate(NowLineDelegate(self.table))
        self.table.setItemDelegateForColumn(0, StateChipDelegate(self.table))
        self.table.setItemDelegateForColumn(COLUMNS.index("Last outcome"), OutcomeDelegate(self.table))
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        self.table.setWordWrap(False)
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        for column, width in enumerate((130, 140, 250, 130, 70)):
            self.table.setColumnWidth(column, width)
        self.table.selectionModel().currentRowChanged.connect(self._row_changed)
        self.empty_label = QLabel("No occurrences match. Publish a schedule and start the engine, or widen the filter.")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        self.empty_label.setAccessibleName("No occurrences")
        self.empty_label.hide()

        self.ranges_label = QLabel()
        self.ranges_label.setObjectName("expiredRangesLabel")
        self.ranges_label.setWordWrap(True)
        self.ranges_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.ranges_label.setAccessibleName("Expired ranges")
        self.ranges_label.hide()

        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.error_label)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.empty_label, 1)
        layout.addWidget(self.ranges_label)
        layout.addWidget(self.count_label)

        self._text_timer = QTimer(self)
        self._text_timer.setSingleShot(True)
        self._text_timer.setInterval(TEXT_DEBOUNCE_MS)
        self._text_timer.timeout.connect(self.apply_filter)
        self.text_edit.textChanged.connect(lambda _t: self._text_timer.start())
        for box in (self.schedule_box, self.state_box, self.time_box, self.time_field_box, self.kind_box):
            box.currentIndexChanged.connect(self.apply_filter)
        # Qt hands an enum back as its text: read it as the enum again.
        self.order_box.currentIndexChanged.connect(lambda _i: self.model.set_order(Order(self.order_box.currentData())))
        self.now_button.clicked.connect(self.go_to_now)
        self.model.loaded.connect(self._on_loaded)
        self.model.loaded.connect(self.go_to_now)
        self._select_when_loaded: str | None = None
        self.model.loaded.connect(self._select_loaded)
        self.model.refreshed.connect(self._on_loaded)
        self.model.errorOccurred.connect(self._show_error)
        self.model.reload()

    def _size_boxes(self) -> None:
        """The filters give up room down to a few characters (their popups show the long choices);
        the two short choices are always read whole ("by scheduled time"): as wide as their longest."""
        for box, chars in ((self.schedule_box, 10), (self.state_box, 9), (self.time_box, 9), (self.kind_box, 9)):
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(chars)
        for box in (self.time_field_box, self.order_box):
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)

    # --- filter ---------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Count and read the table again (F5)."""
        self.model.reload()

    def focus_filter(self) -> None:
        """Put the cursor in the text filter (Ctrl+F)."""
        self.text_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.text_edit.selectAll()

    def current_filter(self) -> OccurrenceFilter:
        """The filter the bar describes, with the time window taken around the clock's now."""
        window = self.time_box.currentData()
        start: datetime | None = None
        end: datetime | None = None
        if window is not None:
            now = self._ctx.clock.now()
            start, end = now + window[0], now + window[1]
        text = self.text_edit.text().strip() or None
        by_due = self.time_field_box.currentData() == "due"
        return OccurrenceFilter(
            schedule_id=self.schedule_box.currentData(),
            states=self.state_box.currentData(),
            position_from=None if by_due else start,
            position_to=None if by_due else end,
            due_from=start if by_due else None,
            due_to=end if by_due else None,
            kind=OccurrenceKind(kind) if (kind := self.kind_box.currentData()) else None,
            text=text,
        )

    def apply_filter(self) -> None:
        self._text_timer.stop()
        self.count_label.setText("Reading the ledger…")
        self.model.set_filter(self.current_filter())

    def go_to_now(self) -> None:
        """Show the rows around now: NOW_LEAD rows above the line at now, the rest below."""
        total = self.model.rowCount()
        if not total:
            return
        self.table.scrollTo(self.model.index(self.model.opening_row, 0), QAbstractItemView.ScrollHint.PositionAtTop)

    def show_only(self, occurrence_id: str) -> None:
        """Show one occurrence, whatever the filter was, and select it (its detail follows)."""
        for box in (self.schedule_box, self.state_box, self.time_box, self.time_field_box, self.kind_box):
            box.blockSignals(True)
            box.setCurrentIndex(0)
            box.blockSignals(False)
        self.text_edit.blockSignals(True)
        self.text_edit.setText(occurrence_id)
        self.text_edit.blockSignals(False)
        self._select_when_loaded = occurrence_id
        self.apply_filter()

    def _select_loaded(self) -> None:
        wanted, self._select_when_loaded = self._select_when_loaded, None
        if wanted is None:
            return
        for row in range(min(self.model.rowCount(), OPENING_SEARCH)):
            index = self.model.index(row, 0)
            if index.data(OccurrenceIdRole) == wanted:
                self.table.setCurrentIndex(index)
                self.table.scrollTo(index)
                return

    def set_schedule(self, schedule_id: str | None) -> None:
        """Show one schedule's occurrences (from the sidebar)."""
        found = self.schedule_box.findData(schedule_id)
        if found < 0 and schedule_id is not None:
            self.schedule_box.addItem(schedule_id, schedule_id)
            found = self.schedule_box.count() - 1
        self.schedule_box.setCurrentIndex(max(found, 0))

    # --- model events ----------------------------------------------------------------------------

    def _on_loaded(self) -> None:
        self.error_label.hide()
        total = self.model.rowCount()
        text = f"{total:,} occurrence{'s' if total != 1 else ''}"
        if total:
            text += f" · {self.model.later_count:,} after now"
        self.count_label.setText(text)
        self.table.setVisible(total > 0)
        self.empty_label.setVisible(total == 0)
        known = {self.schedule_box.itemData(i) for i in range(self.schedule_box.count())}
        for sid in self.model.schedule_ids():
            if sid not in known:
                self.schedule_box.addItem(sid, sid)
        self._show_ranges()

    def _show_ranges(self) -> None:
        """One line per expired range the filter selects, under the table (their occurrences have no rows)."""
        ranges = self.model.expired_ranges()
        self.ranges_label.setVisible(bool(ranges))
        if not ranges:
            self.ranges_label.clear()
            return
        glyph = look("MISFIRE_EXPIRED").glyph
        lines = [f"{glyph} {r.line()}" for r in ranges[:RANGE_LINES]]
        if len(ranges) > RANGE_LINES:
            more = len(ranges) - RANGE_LINES
            lines.append(f"and {more:,} more expired range{'s' if more != 1 else ''} (schedctl ledger lists them all)")
        self.ranges_label.setText("\n".join(lines))
        self.ranges_label.setToolTip(
            "Missed occurrences recorded as one entry each after a long outage; they have no rows in the table:\n"
            + "\n".join(r.summary() for r in ranges[:RANGE_LINES])
        )

    def _show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()

    def _row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        occurrence_id = current.siblingAtColumn(0).data(OccurrenceIdRole)
        if occurrence_id:
            self.occurrenceSelected.emit(str(occurrence_id))
