"""The left column: SCHEDULES (the workspace's spec files, with what the ledger
knows of each) and MONITOR (occurrences, attention with its badge, health, schedules,
engines).

:func:`schedule_rows` joins files and ledger summaries into plain rows; the
Qt model only shows them. A row is named by the schedule's title (else its id,
else the file's name); the tooltip gives the id and the file. A file shares
its schedule's state only when the ledger's active revision came from that
file: another file that happens to carry the same id is "not published".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase, QFontMetrics, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QLabel,
    QListView,
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from core.errors import ZoneError
from core.time.zones import format_offset, get_zone
from scheduler_gui import status_style
from scheduler_gui.a11y import accessible
from scheduler_gui.elide import whole_words
from scheduler_gui.workspace.folder import SpecEntry
from scheduler_gui.workspace.schedule_names import Published

if TYPE_CHECKING:
    # Only for types: importing the ledger package loads SQLAlchemy, which the first paint does not need.
    from core.ledger.queries import ScheduleSummary

Index = QModelIndex | QPersistentModelIndex

#: How a schedule's gate (``ScheduleState`` values) looks in the list (colour is never the only signal).
GATE_LOOKS = {
    "active": status_style.Look("●", "active", status_style.BLUISH_GREEN),
    "paused": status_style.Look("◐", "paused", status_style.ORANGE),
    "disabled": status_style.Look("⊘", "disabled", status_style.GREY, hollow=True),
}
ATTENTION_LOOK = status_style.Look("⚠", "needs attention", status_style.REDDISH_PURPLE)
NOT_PUBLISHED = status_style.Look("○", "not published", None, hollow=True)
#: A file whose id the ledger has from another file: this file itself is not what runs.
ID_ELSEWHERE = status_style.Look("○", "not published · id in use", None, hollow=True)
#: ``OccurrenceState`` values counted in the attention badge.
ATTENTION_STATES = ("UNKNOWN_EFFECT", "FAILED")

KIND_WORDS = {"calendar": "calendar", "interval": "interval", "after_completion": "after completion"}


def fmt_next(when: datetime, zone_name: str, *, compact: bool = False) -> str:
    """``Tue 2027-03-02 02:30 EST −05:00 · 07:30Z``: local with abbreviation and offset, then UTC.

    ``compact`` (the sidebar): ``Tue 03-02 02:30 EST · 07:30Z``. Zones without an
    abbreviation (tzdata writes ``-03``) show the offset once.
    """
    try:
        local = when.astimezone(get_zone(zone_name))
    except ZoneError:
        local = when.astimezone(UTC)
    abbr = local.tzname() or ""
    offset = format_offset(local.utcoffset(), minus="−")
    named = abbr and abbr[0] not in "+-"
    utc = when.astimezone(UTC)
    if compact:
        return f"{local:%a %m-%d %H:%M} {abbr if named else offset} · {utc:%H:%MZ}"
    zone_text = f"{abbr} {offset}" if named else offset
    return f"{local:%a %Y-%m-%d %H:%M} {zone_text} · {utc:%H:%MZ}"


def title_text(label: str, badge: str, room: int, advance: Callable[[str], int]) -> str:
    """A schedule's title line in ``room`` pixels: the label in whole words and "…", then the
    attention badge (" (3)") always whole: "Inbox sync (always… (3)", never "Inbox sync (always hangs) (".
    """
    return whole_words(label, room - advance(badge), advance) + badge


@dataclass(frozen=True)
class ScheduleRow:
    """One line of the SCHEDULES list."""

    path: Path
    label: str
    kind: str
    look: status_style.Look
    attention: int
    next_run: str | None
    tooltip: str
    problem: str | None

    @property
    def second_line(self) -> str:
        if self.problem:
            return "cannot be read"
        return " · ".join(p for p in (self.kind, self.look.word) if p)

    @property
    def third_line(self) -> str | None:
        return f"next {self.next_run}" if self.next_run else None


def schedule_rows(
    entries: Sequence[SpecEntry], summaries: Mapping[str, ScheduleSummary], unpublishable: str | None = None
) -> list[ScheduleRow]:
    """The sidebar rows, in the order of their titles (as a person reads them, not the files' names): each
    spec file, joined with the ledger's summary of its schedule when the ledger's active revision was
    published from that file (or did not record its file)."""
    from core.ledger.states import OccurrenceState  # loaded already when there are summaries to show

    rows = []
    for entry in entries:
        summary = summaries.get(entry.schedule_id or "")
        kind = KIND_WORDS.get(entry.kind or "", entry.kind or "")
        label = entry.title or entry.label
        tip = [f"{entry.title}  ({entry.path.name})" if entry.title else entry.path.name]
        if entry.schedule_id:
            tip.append(f"Id {entry.schedule_id}")
        tip.append(f"File {entry.path}")
        if entry.problem:
            problem = f"{entry.path.name}: {entry.problem}" if entry.path.name not in entry.problem else entry.problem
            rows.append(ScheduleRow(entry.path, label, kind, NOT_PUBLISHED, 0, None, problem, entry.problem))
            continue
        if summary is None:
            tip.append("Not published to the ledger yet")
            rows.append(ScheduleRow(entry.path, label, kind, NOT_PUBLISHED, 0, None, "\n".join(tip), None))
            continue
        published = Published.of(summary)
        if unpublishable is not None and not published.came_from(entry.path):
            # A window that cannot publish shows the file as the ledger's schedule of its id, saying where
            # that was published from: there is no replacement to warn of.
            tip.append(f"Published from {published.where()}; this file may differ from it")
            tip.append(f"This window cannot publish: {unpublishable}")
        elif not published.came_from(entry.path):
            tip.append(
                f"Not published: the ledger's {summary.schedule_id} (revision {summary.active_revision}) was "
                f"published from {published.where()}, not from this file. Publishing this file would replace it."
            )
            rows.append(ScheduleRow(entry.path, label, kind, ID_ELSEWHERE, 0, None, "\n".join(tip), None))
            continue
        attention = sum(summary.counts.get(OccurrenceState(s), 0) for s in ATTENTION_STATES)
        gate = GATE_LOOKS.get(str(summary.state), NOT_PUBLISHED)
        look = ATTENTION_LOOK if attention else gate
        next_run = fmt_next(summary.next_due_at, summary.time_zone, compact=True) if summary.next_due_at else None
        tip.append(f"Revision {summary.active_revision} · {gate.word}")
        if not published.source_known:
            tip.append("The ledger did not record which file it was published from")
        if attention:
            tip.append(f"{attention:,} occurrence(s) need attention")
        if summary.next_due_at:
            later = " (from the published rule: not materialized yet)" if summary.next_due_expected else ""
            tip.append(f"Next run {fmt_next(summary.next_due_at, summary.time_zone)}{later}")
        rows.append(ScheduleRow(entry.path, label, kind, look, attention, next_run, "\n".join(tip), None))
    return sorted(rows, key=lambda row: (row.label.casefold(), row.path.name))


class ScheduleListModel(QAbstractListModel):
    """The SCHEDULES rows; ``Qt.UserRole`` gives the file's path."""

    PathRole = Qt.ItemDataRole.UserRole
    SecondLineRole = Qt.ItemDataRole.UserRole + 1
    RowRole = Qt.ItemDataRole.UserRole + 2

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[ScheduleRow] = []

    def set_rows(self, rows: list[ScheduleRow]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def row_of(self, path: Path | None) -> int:
        for i, row in enumerate(self._rows):
            if path is not None and row.path == path:
                return i
        return -1

    def rows(self) -> list[ScheduleRow]:
        return list(self._rows)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            badge = f" ({row.attention:,})" if row.attention else ""
            lines = [f"{row.look.glyph} {row.label}{badge}", f"  {row.second_line}"]
            if row.third_line:
                lines.append(f"  {row.third_line}")
            return "\n".join(lines)
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.tooltip
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return ", ".join(p for p in (row.label, row.second_line, row.third_line) if p)
        if role == Qt.ItemDataRole.ForegroundRole:
            return QColor(row.look.colour) if row.look.colour else None
        if role == self.PathRole:
            return str(row.path)
        if role == self.SecondLineRole:
            return row.second_line
        if role == self.RowRole:
            return row
        return None


class ScheduleDelegate(QStyledItemDelegate):
    """Draws a schedule as its glyph (in the state's colour) and id, then kind and state, then the next run."""

    PAD = 4

    def _lines(self, index: Index) -> list[str]:
        return str(index.data(Qt.ItemDataRole.DisplayRole) or "").split("\n")

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        height = option.fontMetrics.lineSpacing() * len(self._lines(index)) + 2 * self.PAD
        return QSize(option.rect.width() or 240, height)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        row = index.data(ScheduleListModel.RowRole)
        if not isinstance(row, ScheduleRow):
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        palette = option.palette  # the view's colours: the row's foreground colour is for its glyph only
        text = palette.highlightedText().color() if selected else palette.text().color()
        muted = QColor(text)
        muted.setAlpha(170)
        metrics = opt.fontMetrics
        line = metrics.lineSpacing()
        x = opt.rect.left() + self.PAD
        y = opt.rect.top() + self.PAD + metrics.ascent()
        width = opt.rect.width() - 2 * self.PAD
        painter.save()
        glyph = f"{row.look.glyph} "
        painter.setPen(QColor(row.look.colour) if row.look.colour and not selected else text)
        painter.drawText(x, y, glyph)
        bold = QFont(opt.font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(text)
        gx = x + metrics.horizontalAdvance(glyph)
        badge = f" ({row.attention:,})" if row.attention else ""
        room = width - (gx - x)
        painter.drawText(gx, y, title_text(row.label, badge, room, QFontMetrics(bold).horizontalAdvance))
        painter.setFont(opt.font)
        painter.setPen(muted)
        for extra in (row.second_line, row.third_line):
            if extra:
                y += line
                # Whole words, as the status bar: "next Wed 09:00…", never "next Wed 0…".
                painter.drawText(gx, y, whole_words(extra, width - (gx - x), metrics.horizontalAdvance))
        painter.restore()


@dataclass(frozen=True)
class MonitorItem:
    key: str
    label: str
    tooltip: str


MONITOR_ITEMS = (
    MonitorItem("occurrences", "Occurrences", "Every occurrence in the ledger, newest first, live"),
    MonitorItem("attention", "Attention", "Occurrences whose effect is unknown or that failed: they need a decision"),
    MonitorItem("health", "Health", "Delays, misfires and attempts over time"),
    MonitorItem("schedules", "Schedules", "Every published schedule: state, next run, last outcome, recent results"),
    MonitorItem(
        "engines", "Engines", "Every engine seen on the ledger: labels, user, last seen, what it runs and refuses"
    ),
)
_ATTENTION_ROW = next(i for i, item in enumerate(MONITOR_ITEMS) if item.key == "attention")


class MonitorListModel(QAbstractListModel):
    """The MONITOR entries; Attention carries the count badge."""

    KeyRole = Qt.ItemDataRole.UserRole

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._attention = 0

    def set_attention(self, count: int) -> None:
        if count != self._attention:
            self._attention = count
            i = self.index(_ATTENTION_ROW, 0)
            self.dataChanged.emit(i, i)

    @property
    def attention(self) -> int:
        return self._attention

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(MONITOR_ITEMS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(MONITOR_ITEMS):
            return None
        item = MONITOR_ITEMS[index.row()]
        badge = item.key == "attention" and self._attention > 0
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{item.label}  ⚠ {self._attention:,}" if badge else item.label
        if role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleTextRole):
            extra = f" ({self._attention:,} waiting)" if item.key == "attention" else ""
            return f"{item.label}: {item.tooltip}{extra}"
        if role == Qt.ItemDataRole.ForegroundRole and badge:
            return QColor(status_style.REDDISH_PURPLE)
        if role == self.KeyRole:
            return item.key
        return None


def _heading(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setBold(True)
    font.setPointSizeF(font.pointSizeF() * 0.85)
    font.setLetterSpacing(QFont.SpacingType.PercentageSpacing, 108)
    label.setFont(font)
    label.setForegroundRole(label.foregroundRole())
    label.setContentsMargins(6, 8, 6, 2)
    return label


_Card = TypeVar("_Card", bound=QWidget)


class Sidebar(QWidget):
    """SCHEDULES above MONITOR; Enter or a click opens the item."""

    scheduleActivated = Signal(str)
    monitorActivated = Signal(str)
    newFromTemplateRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        self.setAccessibleName("Sidebar")
        self.schedules = ScheduleListModel(self)
        self.monitor = MonitorListModel(self)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

        self.schedule_view = QListView(self)
        self.schedule_view.setModel(self.schedules)
        self.schedule_view.setItemDelegate(ScheduleDelegate(self.schedule_view))
        accessible(self.schedule_view, "Schedules", "The schedules in the workspace folder: state, kind and next run")
        self.schedule_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.schedule_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.schedule_view.setUniformItemSizes(False)
        self.schedule_view.setSpacing(1)
        self.schedule_view.setWordWrap(False)
        self.schedule_view.setFont(mono)
        self.schedule_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.schedule_view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.schedule_view.activated.connect(self._on_schedule)
        self.schedule_view.clicked.connect(self._on_schedule)

        self.empty = QWidget(self)
        empty_layout = QVBoxLayout(self.empty)
        empty_layout.setContentsMargins(6, 4, 6, 4)
        note = QLabel("No schedules yet.")
        note.setWordWrap(True)
        self.empty_button = QPushButton("New from template…")
        accessible(self.empty_button, "New from template", "Start from one of the demo schedules")
        self.empty_button.clicked.connect(self.newFromTemplateRequested)
        empty_layout.addWidget(note)
        empty_layout.addWidget(self.empty_button)
        empty_layout.addStretch(1)

        self.monitor_view = QListView(self)
        self.monitor_view.setModel(self.monitor)
        accessible(
            self.monitor_view,
            "Monitor views",
            "The ledger: occurrences, what needs attention, health, schedules, engines",
        )
        self.monitor_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.monitor_view.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.monitor_view.activated.connect(self._on_monitor)
        self.monitor_view.clicked.connect(self._on_monitor)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(_heading("SCHEDULES"))
        layout.addWidget(self.schedule_view, 1)
        layout.addWidget(self.empty, 1)
        self._layout = layout
        layout.addWidget(_heading("MONITOR"))
        layout.addWidget(self.monitor_view)
        self._fit_monitor()
        self._update_empty()
        self.schedules.modelReset.connect(self._update_empty)
        self.setMinimumWidth(200)

    def add_card(self, card: _Card) -> _Card:
        """Put ``card`` under the schedules, above MONITOR (the first-run card); returns it."""
        self._layout.insertWidget(self._layout.indexOf(self.empty) + 1, card)
        return card

    def sizeHint(self) -> QSize:
        return QSize(290, 600)

    def _fit_monitor(self) -> None:
        rows = self.monitor.rowCount()
        height = self.monitor_view.sizeHintForRow(0) * rows + 2 * self.monitor_view.frameWidth() + 8
        self.monitor_view.setFixedHeight(max(height, 24 * rows))

    def _update_empty(self) -> None:
        empty = self.schedules.rowCount() == 0
        self.empty.setVisible(empty)
        self.schedule_view.setVisible(not empty)

    def set_rows(self, rows: list[ScheduleRow], current: Path | None) -> None:
        self.schedules.set_rows(rows)
        self.select_path(current)

    def select_path(self, path: Path | None) -> None:
        row = self.schedules.row_of(path)
        sel = self.schedule_view.selectionModel()
        if row < 0:
            sel.clearSelection()
            return
        self.schedule_view.setCurrentIndex(self.schedules.index(row, 0))

    def select_monitor(self, key: str) -> None:
        for i, item in enumerate(MONITOR_ITEMS):
            if item.key == key:
                self.monitor_view.setCurrentIndex(self.monitor.index(i, 0))
                self.schedule_view.selectionModel().clearSelection()

    def _on_schedule(self, index: QModelIndex) -> None:
        self.monitor_view.selectionModel().clearSelection()
        self.scheduleActivated.emit(str(index.data(ScheduleListModel.PathRole)))

    def _on_monitor(self, index: QModelIndex) -> None:
        self.schedule_view.selectionModel().clearSelection()
        self.monitorActivated.emit(str(index.data(MonitorListModel.KeyRole)))
