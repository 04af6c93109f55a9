"""The schedules of the ledger as a Qt model: state, next run, last outcome,
counts by state and the marks of recent results (for the sparkline delegate).

A thin adapter over :func:`core.ledger.monitor_reads.schedules_with_results`
(the summaries and recent results), read off the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from core.engine.presence import STALE_AFTER
from core.ledger.health_queries import Mark
from core.ledger.monitor_reads import schedules_with_results
from core.ledger.queries import ScheduleSummary
from core.ledger.states import OccurrenceState, ScheduleState
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.ledger_table import LedgerTableModel
from scheduler_gui.monitor.timetext import local_text, tabular_font, utc_text
from scheduler_gui.status_style import GREY, ORANGE, look

SPARK_LENGTH = 24

MarksRole = Qt.ItemDataRole.UserRole + 10
ScheduleIdRole = Qt.ItemDataRole.UserRole + 11

COLUMNS = ("Schedule", "State", "Next run", "Next run (UTC)", "Last outcome", "Counts", "Recent results")
_TIPS = (
    "The schedule's id and title",
    "Whether the engine runs it: active, paused or disabled, or waiting for an engine that runs it",
    "When it next runs, on its own clock (zone abbreviation and offset)",
    "The same instant in UTC",
    "How its most recent occurrence ended",
    "Its occurrences counted by state",
    "Its latest results, oldest on the left, newest on the right",
)

_SCHEDULE_LOOKS: dict[ScheduleState, tuple[str, str | None]] = {
    ScheduleState.ACTIVE: ("● active", None),
    ScheduleState.PAUSED: ("⏸ paused", ORANGE),
    ScheduleState.DISABLED: ("⊘ disabled", GREY),
}

#: The order of the states in the counts column.
_COUNT_ORDER = (
    OccurrenceState.SUCCEEDED,
    OccurrenceState.FAILED,
    OccurrenceState.UNKNOWN_EFFECT,
    OccurrenceState.RUNNING,
    OccurrenceState.RETRY_WAIT,
    OccurrenceState.DUE,
    OccurrenceState.PLANNED,
    OccurrenceState.MISFIRE_EXPIRED,
)


@dataclass(frozen=True)
class ScheduleRow:
    summary: ScheduleSummary
    marks: tuple[Mark, ...]

    @property
    def schedule_id(self) -> str:
        return self.summary.schedule_id


def counts_text(summary: ScheduleSummary) -> str:
    """``✔ 44 · ✖ 7 · ? 4 · ○ 336``: the states that have occurrences, most telling first."""
    parts = [
        f"{look(s.value).glyph} {summary.count_text(s)}"
        for s in _COUNT_ORDER
        if summary.counts.get(s) or (s is OccurrenceState.MISFIRE_EXPIRED and summary.uncounted_ranges)
    ]
    others = sum(n for s, n in summary.counts.items() if s not in _COUNT_ORDER)
    if others:
        parts.append(f"⊘ {others:,}")
    return " · ".join(parts) or "none yet"


class SchedulesModel(LedgerTableModel):
    """One row per schedule, by id."""

    COLUMNS = COLUMNS
    TIPS = _TIPS

    def __init__(self, ctx: AppContext, parent: QObject | None = None) -> None:
        super().__init__(ctx, parent)
        self._rows: list[ScheduleRow] = []
        self._font = tabular_font()

    def read_work(self) -> Callable[[], list[ScheduleRow]]:
        now, ctx = self._ctx.clock.now(), self._ctx

        def work() -> list[ScheduleRow]:
            found = schedules_with_results(ctx.ledger, now, limit=SPARK_LENGTH, stale_after=STALE_AFTER)
            return [ScheduleRow(r.summary, r.marks) for r in found]

        return work

    def row_at(self, row: int) -> ScheduleRow | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def take(self, answer: list[ScheduleRow]) -> None:
        same = [r.schedule_id for r in answer] == [r.schedule_id for r in self._rows]
        self.replace(same, lambda: setattr(self, "_rows", answer))

    # --- Qt's model interface --------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows) or index.column() >= len(COLUMNS):
            return None
        row = self._rows[index.row()]
        s, column = row.summary, index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return self._text(row, column, accessible=role == Qt.ItemDataRole.AccessibleTextRole)
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 1 and s.waiting:
                return f"No engine runs it now: {s.waiting}"
            if column == 6:
                return "\n".join(f"{utc_text(m.position_utc)}  {look(m.state.value).label}" for m in row.marks[::-1])
            return s.note or s.title or s.schedule_id
        if role == Qt.ItemDataRole.ForegroundRole:
            if column == 1:
                colour = ORANGE if s.waiting else _SCHEDULE_LOOKS[s.state][1]
                return None if colour is None else QColor(colour)
            if column == 4 and row.marks:
                return look(row.marks[-1].state.value).qcolor()
            return None
        if role == Qt.ItemDataRole.FontRole and column in (2, 3, 5):
            return self._font
        if role == MarksRole:
            return [m.state.value for m in row.marks]
        if role == ScheduleIdRole:
            return s.schedule_id
        return None

    def _text(self, row: ScheduleRow, column: int, *, accessible: bool) -> str:
        s = row.summary
        if column == 0:
            return f"{s.schedule_id} — {s.title}" if s.title else s.schedule_id
        if column == 1:
            if s.waiting:
                return f"{_SCHEDULE_LOOKS[s.state][0]}, {s.waiting}" if accessible else "◌ waiting"
            return _SCHEDULE_LOOKS[s.state][0]
        if column == 2:
            return local_text(s.next_due_at, s.time_zone) if s.next_due_at else "—"
        if column == 3:
            return utc_text(s.next_due_at)
        if column == 4:
            return look(row.marks[-1].state.value).label if row.marks else "—"
        if column == 5:
            return counts_text(s)
        if accessible:
            return ", ".join(look(m.state.value).word for m in row.marks) or "no results yet"
        return ""
