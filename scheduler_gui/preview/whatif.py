"""What-if: "the machine was off from … to …; what happens when it comes back?"

The answer comes from :func:`core.explain.whatif.what_if`, which asks the engine's own
misfire decision, so the view shows exactly what the engine would do: which
occurrences run on time, which are made up late, which expire and why. The
question is answered off the GUI thread; a newer question drops an older answer.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QDateTime,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimeZone,
    Signal,
)
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDateTimeEdit,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.engine.misfire import Action
from core.explain.whatif import WhatIfRow, what_if
from core.spec.model import ScheduleSpec
from core.time.durations import durations_in_words, human_duration
from core.time.zones import get_zone
from scheduler_gui.a11y import accessible, buddy
from scheduler_gui.context import AppContext
from scheduler_gui.elide import WholeWordsDelegate
from scheduler_gui.preview import text
from scheduler_gui.preview.model import row_tooltip
from scheduler_gui.status_style import ORANGE, Look, look
from scheduler_gui.workspace.document import SpecDocument
from scheduler_gui.workspace.spec_follower import SpecFollower

#: Milliseconds of quiet after the last change before the question is asked again.
DEBOUNCE_MS = 150
DEFAULT_OUTAGE = timedelta(days=3)

ACTION_LOOKS = {
    Action.RUN: Look("✓", "runs on time", None),
    Action.CATCH_UP: Look("↻", "runs late", ORANGE),
    Action.EXPIRE: look("MISFIRE_EXPIRED"),
}
HEADERS = ("Was due (local)", "UTC", "On return", "Why")
_TIPS = (
    "When the occurrence was due, on the schedule's wall clock",
    "When it was due, in UTC",
    "What the misfire policy does with it when the machine comes back",
    "The reason, in the engine's words",
)
_Index = QModelIndex | QPersistentModelIndex


class WhatIfModel(QAbstractTableModel):
    """The decisions of one what-if question, oldest first."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[WhatIfRow] = []
        self._font = text.tabular_font()

    def set_rows(self, rows: list[WhatIfRow]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def rows(self) -> list[WhatIfRow]:
        return list(self._rows)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(HEADERS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return _TIPS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows) or not 0 <= index.column() < len(HEADERS):
            return None
        row = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cell(row, column)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{HEADERS[column]}: {self._cell(row, column)}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return row_tooltip(row.occurrence)
        if role == Qt.ItemDataRole.ForegroundRole and (column == 2 or row.action is Action.EXPIRE):
            colour = ACTION_LOOKS[row.action].qcolor()
            return QBrush(colour) if colour is not None else None
        if role == Qt.ItemDataRole.FontRole and column < 2:
            return self._font
        if role == Qt.ItemDataRole.UserRole:
            return row
        return None

    @staticmethod
    def _cell(row: WhatIfRow, column: int) -> str:
        occ = row.occurrence
        if column == 0:
            if occ.resolved_local is not None and occ.offset is not None:
                return text.wall_in_zone(occ.resolved_local, occ.abbreviation, occ.offset)
            return text.wall(occ.nominal)
        if column == 1:
            return text.utc_text(row.due)
        if column == 2:
            return ACTION_LOOKS[row.action].label
        return (
            durations_in_words(row.reason)
            if row.reason
            else "due less than latenessWindow before the machine came back"
        )


def _qdt(instant: datetime) -> QDateTime:
    return QDateTime.fromSecsSinceEpoch(int(instant.timestamp()), QTimeZone.utc())


def _instant(value: QDateTime) -> datetime:
    return datetime.fromtimestamp(value.toSecsSinceEpoch(), UTC)


def policy_words(spec: ScheduleSpec) -> str:
    """``misfirePolicy CATCH_UP_BOUNDED (maxCatchUp 1) · latenessWindow 15 min``: durations in words."""
    words = f"misfirePolicy {spec.misfire_policy.value}"
    if spec.effective_max_catch_up is not None:
        words += f" (maxCatchUp {spec.effective_max_catch_up})"
    words += f" · latenessWindow {human_duration(spec.lateness_window)}"
    if spec.catch_up_window is not None:
        words += f" · catchUpWindow {human_duration(spec.catch_up_window)}"
    return words


class WhatIfView(QWidget):
    """Choose an outage; see what the misfire policy would do on return."""

    computed = Signal()
    """A new answer (or message) is shown."""

    def __init__(self, document: SpecDocument, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("whatIf")
        self._doc = document
        self._ctx = ctx
        self._follow = SpecFollower(document, self._question, DEBOUNCE_MS, self)
        self._follow.done.connect(self._on_done)
        self._follow.failed.connect(self._on_failed)
        self._follow.incomplete.connect(self._on_incomplete)
        self.model = WhatIfModel(self)

        now = ctx.clock.now()
        self.from_edit = self._editor("Machine off from", "When the machine (and its engine) stopped, in UTC")
        self.to_edit = self._editor("To (machine back)", "When it came back and the engine started again, in UTC")
        self.from_edit.setDateTime(_qdt(now - DEFAULT_OUTAGE))
        self.to_edit.setDateTime(_qdt(now))
        self.range_error = QLabel()
        self.range_error.setObjectName("fieldError")
        self.range_error.setWordWrap(True)
        self.range_error.setAccessibleName("Outage problem")
        self.range_error.setVisible(False)
        self.local_range = QLabel()
        self.local_range.setAccessibleName("Outage in the schedule's zone")
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setAccessibleName("What happens on return")
        self.table = QTableView()
        self.table.setTabKeyNavigation(False)  # arrows move within it; Tab goes on to the next control
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setItemDelegateForColumn(HEADERS.index("Why"), WholeWordsDelegate(self.table))
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        accessible(
            self.table, "Misfire decisions", "Each occurrence due while the machine was off, and its fate on return"
        )
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setAccessibleName("What-if message")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.table)
        self.stack.addWidget(self.message)

        bar = QHBoxLayout()
        for caption, editor in (("Machine off from", self.from_edit), ("to", self.to_edit)):
            bar.addWidget(buddy(QLabel(caption), editor))
            bar.addWidget(editor)
        bar.addWidget(self.local_range, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.range_error)
        layout.addWidget(self.summary)
        layout.addWidget(self.stack, 1)
        self.setTabOrder(self.from_edit, self.to_edit)
        self.setTabOrder(self.to_edit, self.table)
        for column, sample in enumerate(("Wed 2027-03-14 02:30 CEST ", "2027-03-14 07:00Z ", "⊘ misfire expired ")):
            self.table.setColumnWidth(column, self.table.fontMetrics().horizontalAdvance(sample) + 24)

        self.from_edit.dateTimeChanged.connect(self.schedule_refresh)
        self.to_edit.dateTimeChanged.connect(self.schedule_refresh)
        self.refresh_now()

    def _editor(self, name: str, tip: str) -> QDateTimeEdit:
        editor = QDateTimeEdit()
        editor.setTimeZone(QTimeZone.utc())
        editor.setDisplayFormat("yyyy-MM-dd HH:mm 'UTC'")
        editor.setCalendarPopup(True)
        editor.setFont(text.tabular_font())
        accessible(editor, name, tip)
        return editor

    # --- the question -----------------------------------------------------------------------
    def outage(self) -> tuple[datetime, datetime]:
        return _instant(self.from_edit.dateTime()), _instant(self.to_edit.dateTime())

    def set_outage(self, off_from: datetime, off_to: datetime) -> None:
        self.from_edit.setDateTime(_qdt(off_from))
        self.to_edit.setDateTime(_qdt(off_to))
        self.refresh_now()

    def schedule_refresh(self) -> None:
        self._follow.schedule_refresh()

    def refresh_now(self) -> None:
        self._follow.refresh_now()

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the running question is answered (tests, screenshots)."""
        return self._follow.wait(msecs)

    def _question(self, spec: ScheduleSpec) -> Callable[[], object]:
        """The outage as the fields say it now, shown in the schedule's zone; the work that answers it."""
        off_from, off_to = self.outage()
        self._describe_range(spec, off_from, off_to)
        return partial(what_if, spec, off_from, off_to)

    def _on_incomplete(self, first: object) -> None:
        problem = str(first) if first is not None else "the schedule is not complete yet"
        self._show_message(f"⚠ Nothing can be worked out until this is fixed:\n{problem}")

    def _describe_range(self, spec: ScheduleSpec, off_from: datetime, off_to: datetime) -> None:
        zone = get_zone(spec.time_zone)
        a, b = off_from.astimezone(zone), off_to.astimezone(zone)
        a_off, b_off = a.utcoffset() or timedelta(0), b.utcoffset() or timedelta(0)
        self.local_range.setText(
            f"= {text.wall_in_zone(a.replace(tzinfo=None), a.tzname(), a_off)} → "
            f"{text.wall_in_zone(b.replace(tzinfo=None), b.tzname(), b_off)}"
        )

    # --- answers ----------------------------------------------------------------------------
    def _on_done(self, result: object) -> None:
        assert isinstance(result, list)
        rows: list[WhatIfRow] = result
        self.range_error.setVisible(False)
        self.model.set_rows(rows)
        spec = self._doc.spec
        policy = policy_words(spec) if spec is not None else ""
        if not rows:
            self.summary.setText(f"On return: nothing to decide. {policy}")
            self._show_message("Nothing was due while the machine was off.")
        else:
            counts = {action: sum(1 for r in rows if r.action is action) for action in Action}
            _, off_to = self.outage()
            self.summary.setText(
                f"On return at {text.utc_text(off_to)}: {counts[Action.CATCH_UP]:,} run late · "
                f"{counts[Action.EXPIRE]:,} expire · {counts[Action.RUN]:,} run on time. {policy}"
            )
            self.stack.setCurrentWidget(self.table)
        self.computed.emit()

    def _on_failed(self, message: str) -> None:
        # The outage itself is wrong (backwards, too long): say so beside the fields, change nothing else.
        self.range_error.setText(f"Outage: {message}")
        self.range_error.setVisible(True)
        self.computed.emit()

    def _show_message(self, message: str) -> None:
        if self._doc.spec is None:
            self.model.set_rows([])
            self.summary.setText("")
            self.local_range.setText("")
        self.message.setText(message)
        self.stack.setCurrentWidget(self.message)
        if self._doc.spec is None:
            self.computed.emit()
