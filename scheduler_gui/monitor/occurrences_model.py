"""The occurrences table as a Qt model: the filtered count as its rows, pages
fetched on demand off the GUI thread, never the whole table.

A new filter or order is read around now (:func:`core.ledger.monitor_reads.occurrences_opening`):
the count, the row where now falls (:attr:`OccurrencesModel.now_row`) and the
pages that hold the rows just before and after it, so the view can open there.

``rowCount`` is the filtered count. A row whose page is not loaded shows "…"
and asks for its page; when the page arrives, its rows change. At most
``max_pages`` pages are kept (the least recently shown are dropped). Scrolling
on from a loaded page continues from its last row (keyset); a jump reads the
page by its index (:func:`core.ledger.monitor_reads.occurrences_page`).

Live: :meth:`follow` connects a :class:`LedgerWatcher`. New or changed
occurrences trigger a refresh: a new count and the pages in view read again.
Rows that appeared are inserted where the order puts new positions (at the top
when newest are first), so the table never resets under the person's eyes.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer, Signal

from core.ledger.expired import ExpiredRangeView
from core.ledger.monitor_reads import (
    OpeningRead,
    PagesRead,
    occurrences_again,
    occurrences_opening,
    occurrences_page,
)
from core.ledger.occurrence_pages import MonitorRow, Order
from core.ledger.queries import EventView, OccurrenceFilter
from core.ledger.states import OccurrenceKind
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.background import Background
from scheduler_gui.monitor.ledger_table import column_header
from scheduler_gui.monitor.ledger_watch import is_live
from scheduler_gui.monitor.timetext import local_text, nominal_text, tabular_font, utc_text
from scheduler_gui.status_style import look

PAGE_SIZE = 100
MAX_PAGES = 40
#: Milliseconds of quiet in the event stream before the table is read again.
REFRESH_DEBOUNCE_MS = 250
#: Pages read again by a live refresh (the most recently shown ones).
REFRESH_PAGES = 4

#: Rows shown above now when the table opens: newest first, the next ones due.
NOW_LEAD = 3
#: Rows read around now when the table opens (more than a tall window shows).
OPENING_ROWS = 60

OccurrenceIdRole = Qt.ItemDataRole.UserRole + 1
StateRole = Qt.ItemDataRole.UserRole + 2
#: "top" on the row now falls before, "bottom" on the last row when now falls after all of them.
NowEdgeRole = Qt.ItemDataRole.UserRole + 3

COLUMNS = ("State", "Schedule", "Local time", "UTC", "Attempts", "Last outcome")
_TIPS = (
    "Where the occurrence stands in its life (glyph, word and colour)",
    "The schedule it belongs to; a manual run (Run Now) or a backfill says so",
    "When it is scheduled, on the schedule's own clock: zone abbreviation and UTC offset",
    "The same instant in UTC",
    "How many times it has been started",
    "How its latest attempt ended",
)


class OccurrencesModel(QAbstractTableModel):
    """Occurrences of ``ctx.ledger`` under a filter and an order, newest first by default."""

    loaded = Signal()
    """A new filter's (or order's) count and first page are in."""
    pageLoaded = Signal(int)
    """A page (by number) arrived and its rows changed."""
    refreshed = Signal()
    """A live refresh finished."""
    errorOccurred = Signal(str)

    def __init__(
        self,
        ctx: AppContext,
        parent: QObject | None = None,
        *,
        page_size: int = PAGE_SIZE,
        max_pages: int = MAX_PAGES,
    ) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._page_size = page_size
        self._max_pages = max(2, max_pages)
        self._filter = OccurrenceFilter()
        self._order = Order.NEWEST_FIRST
        self._total = 0
        self._now_index = 0
        self._pages: OrderedDict[int, list[MonitorRow]] = OrderedDict()
        self._pending: set[int] = set()
        self._zones: dict[str, str] = {}
        self._ranges: list[ExpiredRangeView] = []
        self._generation = 0
        #: Bumped whenever row indexes may have moved (a live refresh): older page reads are dropped.
        self._epoch = 0
        self._ready = False
        self._background = Background(self)
        self._font = tabular_font()
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(REFRESH_DEBOUNCE_MS)
        self._refresh_timer.timeout.connect(self.refresh)

    # --- what it shows -----------------------------------------------------------------------

    @property
    def filter(self) -> OccurrenceFilter:
        return self._filter

    @property
    def order(self) -> Order:
        return self._order

    @property
    def page_size(self) -> int:
        return self._page_size

    @property
    def ready(self) -> bool:
        """The current filter's count and first page are in."""
        return self._ready

    @property
    def now_row(self) -> int:
        """Where now falls: rows above it are later than now when the newest come first
        (at or before now when the oldest do); ``rowCount()`` when now is past every row."""
        return self._now_index

    @property
    def opening_row(self) -> int:
        """The row the view shows at the top when it opens: NOW_LEAD rows above now."""
        return max(0, min(self._now_index - NOW_LEAD, self._total - 1))

    @property
    def later_count(self) -> int:
        """How many rows are positioned after now."""
        return self._now_index if self._order is Order.NEWEST_FIRST else self._total - self._now_index

    def schedule_ids(self) -> list[str]:
        """The ledger's schedules (for the filter bar)."""
        return sorted(self._zones)

    def expired_ranges(self) -> list[ExpiredRangeView]:
        """The expired ranges the filter selects (their occurrences have no rows), newest first."""
        return list(self._ranges)

    def cached_pages(self) -> list[int]:
        return sorted(self._pages)

    def set_filter(self, where: OccurrenceFilter) -> None:
        """Show the occurrences ``where`` selects (counted and read again off the GUI thread)."""
        self._filter = where
        self.reload()

    def set_order(self, order: Order | str) -> None:
        self._order = Order(order)
        self.reload()

    def follow(self, watcher: Any) -> None:
        """Follow new and changed occurrences from a watcher's events (without full reloads)."""
        if watcher is not None:
            watcher.eventsArrived.connect(self.on_events)

    def on_events(self, events: list[EventView]) -> None:
        if any(is_live(e) for e in events):
            self._refresh_timer.start()

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the queued reads are done (their results still arrive through the event loop)."""
        return self._background.wait(msecs)

    # --- reading ---------------------------------------------------------------------------------

    def reload(self) -> None:
        """Count and read the rows around now again, for a new filter or order."""
        self._generation += 1
        self._ready = False
        generation, where, order, size = self._generation, self._filter, self._order, self._page_size
        now = self._ctx.clock.now()

        def work() -> OpeningRead:
            return occurrences_opening(
                self._ctx.ledger, where, now, size, order=order, lead=NOW_LEAD, shown=OPENING_ROWS
            )

        self._background.submit("reload", work, lambda r: self._reloaded(generation, r), self._failed)

    def refresh(self) -> None:
        """Count again and read the pages in view again (live following)."""
        self._refresh_timer.stop()
        if not self._ready:
            return
        generation, where, order, size = self._generation, self._filter, self._order, self._page_size
        wanted = list(self._pages)[-REFRESH_PAGES:]
        now = self._ctx.clock.now()

        def work() -> PagesRead:
            return occurrences_again(self._ctx.ledger, where, now, size, wanted, order=order)

        self._background.submit("refresh", work, lambda r: self._refreshed(generation, r), self._failed)

    def _fetch(self, page: int) -> None:
        if page in self._pending or page in self._pages or not self._ready:
            return
        self._pending.add(page)
        generation, where, order, size, total = (
            (self._generation, self._epoch),
            self._filter,
            self._order,
            self._page_size,
            self._total,
        )
        before = self._pages.get(page - 1)
        after = self._pages.get(page + 1)

        def work() -> list[MonitorRow]:
            return occurrences_page(
                self._ctx.ledger, where, page, size, order=order, total=total, before=before, after=after
            )

        self._background.submit(
            f"page-{page}",
            work,
            lambda rows: self._page_in(generation, page, rows),
            lambda message: self._page_failed(generation, page, message),
            latest_only=False,
        )

    def _reloaded(self, generation: int, result: OpeningRead) -> None:
        if generation != self._generation:
            return
        self.beginResetModel()
        self._epoch += 1
        self._total = result.opening.total
        self._now_index = result.opening.now_index
        self._zones = result.zones
        self._ranges = result.ranges
        self._pages.clear()
        self._pending.clear()
        for page, rows in sorted(result.opening.pages.items()):
            self._pages[page] = rows
        self._ready = True
        self.endResetModel()
        self.loaded.emit()

    def _refreshed(self, generation: int, result: PagesRead) -> None:
        if generation != self._generation:
            return
        self._zones = result.zones
        self._ranges = result.ranges
        self._now_index = result.now_index
        self._epoch += 1
        old = self._total
        grown = result.total - old
        if grown > 0:
            first = 0 if self._order is Order.NEWEST_FIRST else old
            self.beginInsertRows(QModelIndex(), first, first + grown - 1)
            self._total = result.total
            self._pages.clear()
            self.endInsertRows()
        elif grown < 0:
            self.beginRemoveRows(QModelIndex(), result.total, old - 1)
            self._total = result.total
            self._pages.clear()
            self.endRemoveRows()
        self._pages.clear()
        self._pending.clear()
        for page, rows in sorted(result.pages.items()):
            self._pages[page] = rows
        if self._total:
            self.dataChanged.emit(self.index(0, 0), self.index(self._total - 1, len(COLUMNS) - 1))
        self.refreshed.emit()

    def _page_in(self, generation: tuple[int, int], page: int, rows: list[MonitorRow]) -> None:
        if generation != (self._generation, self._epoch):
            return
        self._pending.discard(page)
        self._pages[page] = rows
        self._pages.move_to_end(page)
        while len(self._pages) > self._max_pages:
            self._pages.popitem(last=False)
        first = page * self._page_size
        last = min(first + self._page_size, self._total) - 1
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(COLUMNS) - 1))
        self.pageLoaded.emit(page)

    def _page_failed(self, generation: tuple[int, int], page: int, message: str) -> None:
        if generation == (self._generation, self._epoch):
            self._pending.discard(page)
            self.errorOccurred.emit(message)

    def _failed(self, message: str) -> None:
        self.errorOccurred.emit(message)

    # --- rows ---------------------------------------------------------------------------------------

    def row_at(self, row: int, *, fetch: bool = True) -> MonitorRow | None:
        """The occurrence shown at ``row``, or None while its page is on its way."""
        if row < 0 or row >= self._total:
            return None
        page, at = divmod(row, self._page_size)
        rows = self._pages.get(page)
        if rows is None:
            if fetch:
                self._fetch(page)
            return None
        self._pages.move_to_end(page)
        return rows[at] if at < len(rows) else None

    # --- Qt's model interface ---------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._total

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return column_header(COLUMNS, _TIPS, section, orientation, role)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= self._total or index.column() >= len(COLUMNS):
            return None
        item = self.row_at(index.row())
        column = index.column()
        if item is None:
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
                return "…" if column == 0 else ""
            return None
        occ = item.occurrence
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return self._text(item, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(item)
        if role == Qt.ItemDataRole.ForegroundRole and column in (0, 5):
            state = occ.state.value if column == 0 else _outcome_state(item)
            return look(state).qcolor() if state else None
        if role == Qt.ItemDataRole.FontRole and column in (2, 3, 4):
            return self._font
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 4:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == OccurrenceIdRole:
            return occ.occurrence_id
        if role == NowEdgeRole:
            return self._now_edge(index.row())
        if role == StateRole:
            return occ.state.value
        return None

    def _now_edge(self, row: int) -> str | None:
        if row == self._now_index:
            return "top"
        if self._now_index == self._total and row == self._total - 1:
            return "bottom"
        return None

    def _text(self, item: MonitorRow, column: int) -> str:
        occ = item.occurrence
        if column == 0:
            return look(occ.state.value).label
        if column == 1:
            if occ.kind is OccurrenceKind.SCHEDULED:
                return occ.schedule_id
            return f"{occ.schedule_id} · {_KIND_WORDS[occ.kind]}"
        if column == 2:
            if occ.resolved_utc is None:
                return f"{nominal_text(occ.nominal_local, occ.fold_ordinal)} (no such time)"
            return local_text(occ.resolved_utc, self._zones.get(occ.schedule_id, "UTC"))
        if column == 3:
            return utc_text(occ.resolved_utc)
        if column == 4:
            return str(occ.attempts)
        last = item.last_attempt
        if last is None:
            return "—"
        state = last.outcome.value if last.outcome is not None else "RUNNING"
        return f"{look(state).glyph} {last.ending()}"

    def _tooltip(self, item: MonitorRow) -> str:
        occ = item.occurrence
        parts = [f"{occ.occurrence_id} · {look(occ.state.value).word}", f"nominal {occ.nominal_local}"]
        if occ.kind is not OccurrenceKind.SCHEDULED:
            parts.append(f"{_KIND_WORDS[occ.kind]}: {_KIND_TIPS[occ.kind]}")
        if occ.reason:
            parts.append(occ.reason)
        return "\n".join(parts)


_KIND_WORDS = {OccurrenceKind.MANUAL: "manual", OccurrenceKind.BACKFILL: "backfill", OccurrenceKind.CARRIED: "carried"}
_KIND_TIPS = {
    OccurrenceKind.MANUAL: "a person asked for this run (Run Now)",
    OccurrenceKind.BACKFILL: "a recorded run of a past occurrence (Backfill or Run it again)",
    OccurrenceKind.CARRIED: "keeps its business period across a revision's cutover, at the superseded run's time",
}


def _outcome_state(item: MonitorRow) -> str | None:
    last = item.last_attempt
    if last is None:
        return None
    return last.outcome.value if last.outcome is not None else "RUNNING"
