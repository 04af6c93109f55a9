"""The preview as a table model: one row per occurrence, and a separator row
for each clock change, placed between the occurrences it falls between; under
invalidDatePolicy OMIT, a note row for each date the rule names that its month
lacks ("2027-02-31 does not exist: no run"), where the date would have been.

The model only adapts :class:`core.recurrence.preview.Preview`; every time, status and
reason comes from the core. Cells are computed when the view asks for them, so
replacing 5000 rows costs one pass that merges rows and transitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, timedelta, tzinfo
from enum import Enum
from typing import Any
from zoneinfo import ZoneInfo

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from core.enums import InvalidDatePolicy, Kind, Status
from core.recurrence.compile import compile_schedule
from core.recurrence.invalid_dates import MissingDate, missing_dates
from core.recurrence.occurrence import Occurrence
from core.recurrence.preview import Preview, wake_words
from core.render.table import transition_line
from core.spec.model import ScheduleSpec
from core.time.durations import human_duration
from core.time.zones import Transition, get_zone
from scheduler_gui.preview import text
from scheduler_gui.status_style import BLUE, GREY, Look, look

#: The Occurrence or Transition object behind a row.
ItemRole = Qt.ItemDataRole.UserRole + 1
#: The full text that copying a cell puts on the clipboard (ids unelided).
CopyRole = Qt.ItemDataRole.UserRole + 2

_Index = QModelIndex | QPersistentModelIndex


class Column(Enum):
    NOMINAL = "Nominal"
    LOCAL = "Local"
    UTC = "UTC"
    OFFSET = "Offset"
    SECOND = "Second zone"
    STATUS = "Status"
    WHY = "Why"
    OCCURRENCE_ID = "Occurrence id"
    SLOT_ID = "Slot id"


_TIPS = {
    Column.NOMINAL: "The wall time the rule names, before clock changes are applied",
    Column.LOCAL: "When it runs, on the schedule's wall clock, with the zone abbreviation",
    Column.UTC: "When it runs, in UTC",
    Column.OFFSET: "The zone's offset from UTC at that moment",
    Column.SECOND: "When it runs, as seen in the second zone",
    Column.STATUS: "What the schedule does with this time",
    Column.WHY: "Why a time is skipped, shifted or delayed",
    Column.OCCURRENCE_ID: "The occurrence's stable id (Ctrl+C copies it whole)",
    Column.SLOT_ID: "The logical slot: one run per schedule and instant (Ctrl+C copies it whole)",
}
_TIME_COLUMNS = frozenset({Column.NOMINAL, Column.LOCAL, Column.UTC, Column.OFFSET, Column.SECOND})
_ID_COLUMNS = frozenset({Column.OCCURRENCE_ID, Column.SLOT_ID})
_SEPARATOR_TINT = QColor(BLUE)
_SEPARATOR_TINT.setAlpha(48)


@dataclass(frozen=True)
class _Separator:
    transition: Transition
    line: str


@dataclass(frozen=True)
class _Note:
    missing: MissingDate


def omitted_dates(preview: Preview) -> list[MissingDate]:
    """The dates an OMIT schedule's rule names that their months lack, between its first and last rows."""
    spec = preview.spec
    if spec.kind is not Kind.CALENDAR or spec.invalid_date_policy is not InvalidDatePolicy.OMIT or not preview.rows:
        return []
    compiled = compile_schedule(spec)
    if compiled.parsed is None or spec.start is None:
        return []
    return missing_dates(compiled.parsed, spec.start, preview.rows[0].nominal, preview.rows[-1].nominal)


def _with_notes(
    items: list[Occurrence | Transition], notes: list[MissingDate], zone: ZoneInfo
) -> list[Occurrence | Transition | _Note]:
    """``items`` with each missing date just before the first row or clock change after its month."""
    out: list[Occurrence | Transition | _Note] = []
    at = [note.after_month.replace(tzinfo=zone).astimezone(UTC) for note in notes]
    i = 0
    for item in items:
        when = item.position if isinstance(item, Occurrence) else item.utc
        while i < len(notes) and at[i] <= when:
            out.append(_Note(notes[i]))
            i += 1
        out.append(item)
    return out


def merge_rows(preview: Preview) -> list[Occurrence | Transition]:
    """Rows and transitions in time order: a change sits just before the first row at or after it."""
    out: list[Occurrence | Transition] = []
    pending = sorted(preview.transitions, key=lambda t: t.utc)
    i = 0
    for row in preview.rows:
        while i < len(pending) and pending[i].utc <= row.position:
            out.append(pending[i])
            i += 1
        out.append(row)
    out.extend(pending[i:])
    return out


def row_look(row: Occurrence) -> Look:
    return look(row.status.value, fold_ordinal=row.fold_ordinal)


def transition_words(tr: Transition) -> str:
    """``+1 h`` when clocks jump forward, ``−30 min`` when they fall back."""
    sign = "+" if tr.kind == "gap" else "−"
    return f"{sign}{human_duration(tr.delta)}"


class PreviewModel(QAbstractTableModel):
    """Rows of a :class:`Preview`, with clock changes as separator rows that span every column."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._preview: Preview | None = None
        self._items: list[Occurrence | _Separator | _Note] = []
        self._second: ZoneInfo | None = None
        self._stale = False
        self._columns: list[Column] = [c for c in Column if c is not Column.SECOND]
        self._wake_zone: tzinfo | None = None
        self._font = text.tabular_font()
        self._bold = QFont()
        self._bold.setBold(True)

    # --- content --------------------------------------------------------------------------
    @property
    def preview(self) -> Preview | None:
        return self._preview

    def set_preview(self, preview: Preview | None) -> None:
        """Show ``preview`` (None: no rows)."""
        self.beginResetModel()
        self._preview = preview
        self._stale = False
        self._items = []
        if preview is not None:
            self.wake_for(preview.spec)
            self._items = [
                _Separator(item, transition_line(item)) if isinstance(item, Transition) else item
                for item in _with_notes(merge_rows(preview), omitted_dates(preview), get_zone(preview.spec.time_zone))
            ]
        self.endResetModel()

    def wake_for(self, spec: ScheduleSpec | None) -> None:
        """Say when the machine wakes for each row in the Why column when ``spec`` asks for ``wakeSystem``
        (read in its zone); say nothing of it otherwise."""
        self._wake_zone = get_zone(spec.time_zone) if spec is not None and spec.wake_system else None

    def start_rows(self, rows: list[Occurrence]) -> None:
        """The first rows of a preview still being built, in place of what was shown; its clock
        changes and missing dates come with the whole preview (:meth:`set_preview`)."""
        self.beginResetModel()
        self._preview = None
        self._stale = False
        self._items = list(rows)
        self.endResetModel()

    def append_rows(self, rows: list[Occurrence]) -> None:
        """The next rows of the preview being built, after those shown."""
        if rows:
            first = len(self._items)
            self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
            self._items.extend(rows)
            self.endInsertRows()

    @property
    def stale(self) -> bool:
        """True while the rows are of the document before its last change (drawn grey)."""
        return self._stale

    def set_stale(self, stale: bool) -> None:
        """Grey every row (``stale``) until the rows of the document as it is now arrive."""
        if stale != self._stale:
            self._stale = stale
            if self._items:
                last = self.index(len(self._items) - 1, len(self._columns) - 1)
                self.dataChanged.emit(self.index(0, 0), last, [Qt.ItemDataRole.ForegroundRole])

    @property
    def second_zone(self) -> str | None:
        return self._second.key if self._second is not None else None

    def set_second_zone(self, name: str | None) -> None:
        """Add (a zone name) or remove (None) the second-zone column; raises ZoneError for a bad name."""
        zone = get_zone(name) if name else None
        self.beginResetModel()
        self._second = zone
        self._columns = [c for c in Column if c is not Column.SECOND or zone is not None]
        self.endResetModel()

    def columns(self) -> list[Column]:
        return list(self._columns)

    def column_of(self, column: Column) -> int:
        """The index of ``column``, or -1 when it is not shown."""
        return self._columns.index(column) if column in self._columns else -1

    def separator_rows(self) -> list[int]:
        """Rows that are clock changes."""
        return [i for i, item in enumerate(self._items) if isinstance(item, _Separator)]

    def spanned_rows(self) -> list[int]:
        """Rows that are not occurrences, clock changes and missing dates (the view spans them across all columns)."""
        return [i for i, item in enumerate(self._items) if not isinstance(item, Occurrence)]

    def is_separator(self, row: int) -> bool:
        """True for a row that is a clock change or a missing date, not an occurrence."""
        return 0 <= row < len(self._items) and not isinstance(self._items[row], Occurrence)

    def item(self, row: int) -> Occurrence | Transition | MissingDate | None:
        if not 0 <= row < len(self._items):
            return None
        found = self._items[row]
        if isinstance(found, _Separator):
            return found.transition
        return found.missing if isinstance(found, _Note) else found

    def occurrence_count(self) -> int:
        return len(self._items) - len(self.spanned_rows())

    # --- Qt model -------------------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._items)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self._columns):
            return None
        column = self._columns[section]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            if column is Column.SECOND and self._second is not None:
                return f"In {self._second.key}"
            return column.value
        if role == Qt.ItemDataRole.ToolTipRole:
            return _TIPS[column]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._items):
            return None
        if not 0 <= index.column() < len(self._columns):
            return None
        item = self._items[index.row()]
        if role == ItemRole:
            return self.item(index.row())
        if isinstance(item, _Separator):
            return self._separator_data(item, index.column(), role)
        if isinstance(item, _Note):
            return _note_data(item.missing, index.column(), role)
        return self._row_data(item, self._columns[index.column()], role)

    def _separator_data(self, sep: _Separator, column: int, role: int) -> Any:
        if role in (Qt.ItemDataRole.DisplayRole, CopyRole):
            return sep.line if column == 0 else ""
        if role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleTextRole):
            tr = sep.transition
            motion = "jump forward" if tr.kind == "gap" else "fall back"
            return (
                f"Clock change: clocks {motion} {human_duration(tr.delta)} at {text.utc_text(tr.utc)}, "
                f"{text.offset_text(tr.offset_before)} to {text.offset_text(tr.offset_after)}"
            )
        if role == Qt.ItemDataRole.BackgroundRole:
            return QBrush(_SEPARATOR_TINT)
        if role == Qt.ItemDataRole.FontRole:
            return self._bold
        return None

    def _row_data(self, row: Occurrence, column: Column, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if column is Column.OCCURRENCE_ID:
                return text.elide_id(row.occurrence_id)
            if column is Column.SLOT_ID:
                return text.elide_id(row.logical_slot_id)
            return self._cell(row, column)
        if role == CopyRole:
            if column is Column.OCCURRENCE_ID:
                return row.occurrence_id
            if column is Column.SLOT_ID:
                return row.logical_slot_id or ""
            return self._cell(row, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, column)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            value = row.occurrence_id if column is Column.OCCURRENCE_ID else self._cell(row, column)
            if column is Column.SLOT_ID:
                value = row.logical_slot_id or "none"
            return f"{self.headerData(self._columns.index(column), Qt.Orientation.Horizontal)}: {value}"
        if role == Qt.ItemDataRole.ForegroundRole:
            if self._stale:
                return QBrush(QColor(GREY))
            shade = row_look(row)
            if column is Column.STATUS or not row.runnable:
                colour = shade.qcolor()
                return QBrush(colour) if colour is not None else None
            return None
        if role == Qt.ItemDataRole.FontRole:
            return self._font if column in _TIME_COLUMNS or column in _ID_COLUMNS else None
        return None

    def _cell(self, row: Occurrence, column: Column) -> str:
        if column is Column.NOMINAL:
            return text.wall(row.nominal)
        if column is Column.LOCAL:
            if row.runnable and row.resolved_local is not None and row.offset is not None:
                return text.wall_in_zone(row.resolved_local, row.abbreviation, row.offset)
            if row.status is Status.SKIPPED_FOLD and row.offset is not None:
                # A skipped reading of a repeated time: its abbreviation tells the two apart.
                local = (row.position + row.offset).replace(tzinfo=None)
                return text.wall_in_zone(local, row.abbreviation, row.offset)
            return text.NONE
        if column is Column.UTC:
            return text.utc_text(row.resolved) if row.resolved is not None and row.runnable else text.NONE
        if column is Column.OFFSET:
            return text.offset_text(row.offset) if row.runnable else text.NONE
        if column is Column.SECOND:
            if self._second is None or row.resolved is None or not row.runnable:
                return text.NONE
            there = row.resolved.astimezone(self._second)
            offset = there.utcoffset() or timedelta(0)
            return f"{text.wall_in_zone(there.replace(tzinfo=None), there.tzname(), offset)} {text.offset_text(offset)}"
        if column is Column.STATUS:
            return row_look(row).label
        if column is Column.WHY:
            why = row.reason or ""
            if row.dispatch_delay:
                delay = human_duration(timedelta(seconds=row.dispatch_delay))
                why = f"{why}; dispatched {delay} later (jitter)" if why else f"dispatched {delay} later (jitter)"
            wakes = wake_words(row, self._wake_zone) if self._wake_zone is not None else None
            return f"{why}; {wakes}" if why and wakes else why or wakes or ""
        if column is Column.OCCURRENCE_ID:
            return row.occurrence_id
        return row.logical_slot_id or text.NONE

    def _tooltip(self, row: Occurrence, column: Column) -> str:
        if column is Column.OCCURRENCE_ID:
            return row.occurrence_id
        if column is Column.SLOT_ID:
            return row.logical_slot_id or "No slot: this row runs at no instant"
        return row_tooltip(row)


def _note_data(missing: MissingDate, column: int, role: int) -> Any:
    """A missing date's row: its one line in the first column, greyed like a skipped row."""
    if role in (Qt.ItemDataRole.DisplayRole, CopyRole):
        return f"⊘ {missing.line}" if column == 0 else ""
    if role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleTextRole):
        return f"Missing date: {missing.line}; the rule's next date runs as usual"
    if role == Qt.ItemDataRole.ForegroundRole:
        colour = look(Status.EXCLUDED.value).qcolor()
        return QBrush(colour) if colour is not None else None
    return None


def row_tooltip(row: Occurrence) -> str:
    """Every detail of a row, one per line (the table's and the timeline's tooltip)."""
    lines = [f"{row_look(row).label} · nominal {text.wall(row.nominal)}"]
    if row.resolved is not None and row.offset is not None and row.resolved_local is not None:
        lines.append(
            f"runs {text.wall_in_zone(row.resolved_local, row.abbreviation, row.offset)} "
            f"({text.offset_text(row.offset)}) = {text.utc_text(row.resolved)}"
        )
    else:
        lines.append(f"would have been at {text.utc_text(row.position.astimezone(UTC))}")
    if row.reason:
        lines.append(row.reason)
    if row.dispatch_delay:
        lines.append(f"dispatched {human_duration(timedelta(seconds=row.dispatch_delay))} later (jitter)")
    lines.append(row.occurrence_id)
    return "\n".join(lines)
