"""What the monitor's whole-read tables share (Schedules, Engines): a model read
in one piece off the GUI thread (one :class:`~scheduler_gui.background.LatestOnly`)
and again shortly after the ledger's events arrive, its header from a table of
column names and tooltips, and a page that says when the table is empty or the
ledger cannot be read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import QAbstractItemView, QLabel, QWidget

from core.ledger.queries import EventView
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.background import describe_error, ledger_work

#: Milliseconds to gather the ledger's events before the table is read again.
REFRESH_DEBOUNCE_MS = 400


def column_header(
    columns: tuple[str, ...], tips: tuple[str, ...], section: int, orientation: Qt.Orientation, role: int
) -> Any:
    """A horizontal header's words (its column's name) and tooltip (what the column says)."""
    if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(columns):
        return None
    if role == Qt.ItemDataRole.DisplayRole:
        return columns[section]
    if role == Qt.ItemDataRole.ToolTipRole:
        return tips[section]
    return None


class LedgerTableModel(QAbstractTableModel):
    """A table read whole: :meth:`read_work` says what to read (it runs on a worker thread), and
    :meth:`take` receives the answer on the GUI thread. ``loaded`` follows each answer."""

    COLUMNS: ClassVar[tuple[str, ...]] = ()
    TIPS: ClassVar[tuple[str, ...]] = ()

    loaded = Signal()
    errorOccurred = Signal(str)

    def __init__(self, ctx: AppContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._background = LatestOnly(self, describe=describe_error)
        self._background.done.connect(self._answered)
        self._background.failed.connect(self.errorOccurred.emit)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_DEBOUNCE_MS)
        self._timer.timeout.connect(self.reload)

    def follow(self, watcher: Any) -> None:
        """Read again shortly after ``watcher`` (a :class:`~.ledger_watch.LedgerWatcher`) sees events."""
        if watcher is not None:
            watcher.eventsArrived.connect(self.on_events)

    def on_events(self, events: list[EventView]) -> None:
        if events:
            self._timer.start()

    def reload(self) -> None:
        """Read the table again, off the GUI thread."""
        self._timer.stop()
        self._background.submit(ledger_work(self.read_work()))

    def wait(self, msecs: int = 30_000) -> bool:
        return self._background.wait(msecs)

    def read_work(self) -> Callable[[], Any]:  # pragma: no cover - each table defines it
        """The read to run on the worker (built on the GUI thread: it may take the clock's now)."""
        raise NotImplementedError

    def take(self, answer: Any) -> None:  # pragma: no cover - each table defines it
        """Show ``answer``: reset the model, or say which rows changed."""
        raise NotImplementedError

    def replace(self, same_rows: bool, assign: Callable[[], None]) -> None:
        """Put a new answer in place (``assign``): the rows' data change when they are ``same_rows``
        (the same things in the same order: selection and scrolling stay), else the model resets."""
        if not same_rows:
            self.beginResetModel()
            assign()
            self.endResetModel()
            return
        assign()
        rows = self.rowCount()
        if rows:
            self.dataChanged.emit(self.index(0, 0), self.index(rows - 1, len(self.COLUMNS) - 1))

    def _answered(self, answer: Any) -> None:
        self.take(answer)
        self.loaded.emit()

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return column_header(self.COLUMNS, self.TIPS, section, orientation, role)


class TablePage:
    """A page of one table: ``error_label`` says why the ledger cannot be read, ``empty_label`` stands
    in for the table while it has no rows. Mixed into a QWidget that sets the three."""

    table: QAbstractItemView
    error_label: QLabel
    empty_label: QWidget

    def show_loaded(self) -> None:
        """After an answer: no problem to show, and the table or the empty note."""
        self.error_label.hide()
        model = self.table.model()
        empty = model is None or model.rowCount() == 0
        self.empty_label.setVisible(empty)
        self.table.setVisible(not empty)

    def show_problem(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()
