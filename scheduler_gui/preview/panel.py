"""The preview section: the table of upcoming rows with its controls.

From (now, or a chosen instant), how many rows, jump to the next clock change,
a second zone, export and copy. The rows come from :class:`PreviewService`,
which builds them off the GUI thread; this panel only shows what it reports:
the rows, the spec's problem in place of the table, or an empty state.

After an edit the table is back at its first row. "Next transition" (F6) goes
to the next clock change among the rows, or has the service build the rows on
to the zone's next change and goes there when they arrive. The Why column takes
the width the others leave (a long reason is cut short, whole in its tooltip);
the id columns are shown from the header's menu, and Ctrl+C copies ids either way.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from PySide6.QtCore import QDateTime, QItemSelectionModel, Qt, QTimeZone, Signal
from PySide6.QtGui import QAction, QFontMetrics, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QBoxLayout,
    QComboBox,
    QDateTimeEdit,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.errors import UserError
from core.explain.change_words import day_label, transition_day
from core.recurrence.occurrence import Occurrence
from core.recurrence.preview import Preview
from scheduler_gui.a11y import accessible, buddy
from scheduler_gui.context import AppContext
from scheduler_gui.elide import WholeWordsDelegate
from scheduler_gui.preview.model import Column, CopyRole, PreviewModel, transition_words
from scheduler_gui.preview.service import MAX_ROWS, REACH_LIMIT, Answer, PreviewService
from scheduler_gui.preview.text import tabular_font
from scheduler_gui.preview.zone_choice import ZoneChoice
from scheduler_gui.reflow import Reflow, widths

MIN_ROWS = 10
STALE_NOTE = "Updating: the grey rows are from before the last change."
#: Columns shown only when asked for from the header's menu.
HIDDEN_AT_FIRST = (Column.OCCURRENCE_ID, Column.SLOT_ID)

#: format key -> (menu label, file filter, suffix)
EXPORTS = {
    "csv": ("CSV (spreadsheets)…", "CSV files (*.csv)", ".csv"),
    "json": ("JSON (preview.v1)…", "JSON files (*.json)", ".json"),
    "ics": ("iCalendar (.ics, calendar apps)…", "iCalendar files (*.ics)", ".ics"),
}

_SAMPLE = {
    Column.NOMINAL: "Wed 2027-03-14 02:30 ",
    Column.LOCAL: "Wed 2027-03-14 02:30 CEST ",
    Column.UTC: "2027-03-14 07:00Z ",
    Column.OFFSET: "−04:00 ",
    Column.SECOND: "Wed 2027-03-14 02:30 CEST +05:45 ",
    Column.STATUS: "⊘ skipped: duplicate ",
    Column.WHY: "",
    Column.OCCURRENCE_ID: "occ-1a2b3c4d… ",
    Column.SLOT_ID: "slot-1a2b3c4d… ",
}


class _Table(QTableView):
    """A table whose copy key copies ids (the view's own copy would take one cell's text)."""

    copyRequested = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copyRequested.emit()
            event.accept()
            return
        super().keyPressEvent(event)


class PreviewPanel(QWidget):
    """The preview table of ``service``'s document, with its controls."""

    def __init__(self, service: PreviewService, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("previewPanel")
        self._service = service
        self._ctx = ctx
        self.model = PreviewModel(self)
        self._build_start(ctx)
        self._build_count_and_next(service)
        self._build_zone(ctx)
        self._build_export()
        self._build_busy()
        bar = self._toolbar()
        self._build_table()
        self._build_stand_ins()
        self._lay_out(bar)
        self._connect(service)
        self._jump_pending = False
        self._size_columns()
        if service.latest is not None:
            self.show_preview(service.latest)
        else:
            self._show_message("Building the preview…")
            if service.count != self.count_spin.value():
                service.set_count(self.count_spin.value())
            service.schedule_refresh()

    # --- building ---------------------------------------------------------------------------
    def _build_start(self, ctx: AppContext) -> None:
        """From: now, or a chosen instant (the field is enabled with "a chosen time")."""
        self.from_choice = QComboBox()
        self.from_choice.addItems(["now", "a chosen time"])
        accessible(self.from_choice, "From", "Show rows from now, or from a date and time you choose")
        self.from_edit = QDateTimeEdit()
        self.from_edit.setTimeZone(QTimeZone.utc())
        self.from_edit.setDisplayFormat("yyyy-MM-dd HH:mm 'UTC'")
        self.from_edit.setCalendarPopup(True)
        self.from_edit.setDateTime(QDateTime.fromSecsSinceEpoch(int(ctx.clock.now().timestamp()), QTimeZone.utc()))
        self.from_edit.setEnabled(False)
        self.from_edit.setFont(tabular_font())
        accessible(self.from_edit, "From: chosen time", "The first instant shown, in UTC (with From: a chosen time)")

    def _build_count_and_next(self, service: PreviewService) -> None:
        """How many rows, and the button (F6) that goes to the next clock change."""
        self.count_spin = QSpinBox()
        self.count_spin.setRange(MIN_ROWS, MAX_ROWS)
        self.count_spin.setSingleStep(10)
        self.count_spin.setValue(min(max(service.count, MIN_ROWS), MAX_ROWS))
        self.count_spin.setAccelerated(True)
        accessible(
            self.count_spin,
            "Rows",
            f"How many rows to show ({MIN_ROWS}–{MAX_ROWS}); more are added, up to {REACH_LIMIT} in all, "
            "to reach the zone's next clock change",
        )
        self.next_button = QPushButton("Next transition ⤓")
        accessible(
            self.next_button,
            "Next transition",
            f"Scroll to the next clock change; when it is not among the rows, they are extended to it "
            f"(up to {MAX_ROWS:,} rows) (F6)",
        )
        self.next_button.setShortcut(QKeySequence(Qt.Key.Key_F6))

    def _build_zone(self, ctx: AppContext) -> None:
        """The second zone ("Also in") and the line that says what is wrong with a typed one."""
        self.zone_choice = ZoneChoice(ctx.clock)
        # Narrow enough for the toolbar to fit a 1280-pixel window; the field scrolls a long name.
        self.zone_choice.setMinimumWidth(QFontMetrics(self.font()).horizontalAdvance("America/New_York"))
        self.zone_error = QLabel()
        self.zone_error.setObjectName("fieldError")
        self.zone_error.setWordWrap(True)
        self.zone_error.setVisible(False)

    def _build_export(self) -> None:
        """The Export button, with one menu entry per format of :data:`EXPORTS`."""
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        accessible(self.export_button, "Export", "Save the rows shown as CSV, JSON or an iCalendar file")
        menu = QMenu(self.export_button)
        for fmt, (label, _, _) in EXPORTS.items():
            action = menu.addAction(label)
            action.triggered.connect(lambda _checked=False, f=fmt: self.choose_export(f))
        self.export_button.setMenu(menu)

    def _build_busy(self) -> None:
        # A thin bar under the toolbar: it takes no room from the controls and moves nothing when it shows.
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setFixedHeight(3)
        self.busy.setTextVisible(False)
        policy = self.busy.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.busy.setSizePolicy(policy)
        self.busy.setVisible(False)
        accessible(self.busy, "Building preview", "The preview is being built")
        self.stale_note = QLabel(STALE_NOTE)
        self.stale_note.setWordWrap(True)
        self.stale_note.setStyleSheet("color: palette(placeholder-text);")
        accessible(self.stale_note, "Preview out of date", "The rows shown are replaced when the new ones are ready")
        self.stale_note.setVisible(False)
        self.calendar_note = QLabel()
        self.calendar_note.setWordWrap(True)
        accessible(
            self.calendar_note,
            "Preview without the business calendar",
            "The business calendar is not complete yet: the rows are shown without it until it is",
        )
        self.calendar_note.setVisible(False)

    def _toolbar(self) -> QBoxLayout:
        """The controls in a row, each after its caption; in two rows where one does not fit."""
        rows = QHBoxLayout(), QHBoxLayout()
        captions: tuple[tuple[str | None, QWidget], ...] = (
            ("From", self.from_choice),
            (None, self.from_edit),
            ("Rows", self.count_spin),
        )
        for title, widget in captions:
            if title:
                rows[0].addWidget(buddy(QLabel(title), widget))
            rows[0].addWidget(widget)
        rows[0].addWidget(self.next_button)
        rows[0].addStretch(1)
        rows[1].addWidget(buddy(QLabel("Also in"), self.zone_choice))
        rows[1].addWidget(self.zone_choice, 1)
        rows[1].addWidget(self.export_button)
        bar = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        bar.addLayout(rows[0])
        bar.addLayout(rows[1], 1)
        self.toolbar_rows = Reflow(self, bar, widths(*rows))
        return bar

    def _build_table(self) -> None:
        """The rows: whole rows selected, the id columns shown from the header's menu, Ctrl+C copies ids."""
        self.table = _Table()
        self.table.setTabKeyNavigation(False)  # arrows move within it; Tab goes on to the next control
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setItemDelegate(WholeWordsDelegate(self.table, headers=(Column.WHY.value,)))
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(QFontMetrics(tabular_font()).height() + 8)
        self._build_header(self.table.horizontalHeader())
        accessible(
            self.table,
            "Preview rows",
            "The schedule's upcoming rows; clock changes are separator rows. Ctrl+C copies the selected rows' ids",
        )
        copy = QAction("Copy ids", self.table)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        copy.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        copy.triggered.connect(self.copy_selection)
        self.table.addAction(copy)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.table.copyRequested.connect(self.copy_selection)

    def _build_header(self, header: QHeaderView) -> None:
        """The column header and its right-click menu: one checkable "Show …" per column of :data:`HIDDEN_AT_FIRST`."""
        header.setStretchLastSection(False)
        header.setHighlightSections(False)
        self._shown_ids: set[Column] = set()
        self.column_actions: dict[Column, QAction] = {}
        for column in HIDDEN_AT_FIRST:
            action = QAction(f"Show {column.value.lower()}", header)
            action.setCheckable(True)
            action.toggled.connect(lambda on, c=column: self.show_column(c, on))
            header.addAction(action)
            self.column_actions[column] = action
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        header.setToolTip("Right-click to show the occurrence and slot ids")

    def _build_stand_ins(self) -> None:
        """The message shown in place of the table (a problem, no rows), and the notice under it."""
        self.message = QLabel()
        self.message.setObjectName("previewMessage")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setAccessibleName("Preview message")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.table)
        self.stack.addWidget(self.message)
        self.notice = QLabel()
        self.notice.setObjectName("previewNotice")
        self.notice.setWordWrap(True)
        self.notice.setAccessibleName("Preview notice")
        self.notice.setVisible(False)

    def _lay_out(self, bar: QBoxLayout) -> None:
        """The toolbar over the busy bar, the zone's problem, the table (or its message) and the notice;
        Tab goes along the toolbar, then into the table."""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.busy)
        layout.addWidget(self.stale_note)
        layout.addWidget(self.calendar_note)
        layout.addWidget(self.zone_error)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.notice)
        self.setTabOrder(self.from_choice, self.from_edit)
        self.setTabOrder(self.from_edit, self.count_spin)
        self.setTabOrder(self.count_spin, self.next_button)
        self.setTabOrder(self.next_button, self.zone_choice)
        self.setTabOrder(self.zone_choice, self.export_button)
        self.setTabOrder(self.export_button, self.table)

    def _connect(self, service: PreviewService) -> None:
        """The controls drive the service; the service's results, failures and work show here."""
        self.from_choice.currentIndexChanged.connect(self._on_from_changed)
        self.from_edit.dateTimeChanged.connect(self._on_from_changed)
        self.count_spin.valueChanged.connect(service.set_count)
        self.next_button.clicked.connect(self.next_transition)
        self.zone_choice.zoneChosen.connect(self.set_second_zone)
        self.model.modelReset.connect(self._apply_spans)
        service.ready.connect(self.show_preview)
        service.rowsArrived.connect(self._show_rows)
        service.failed.connect(self.show_failure)
        service.busyChanged.connect(self.busy.setVisible)
        service.outdated.connect(self._outdated)

    # --- service results --------------------------------------------------------------------
    def _outdated(self) -> None:
        """The document changed: its rows shown now are of the one before, grey until the new ones come."""
        if self.model.rowCount():
            self.model.set_stale(True)
            self.stale_note.setText(STALE_NOTE)
            self.stale_note.setVisible(True)

    def _show_rows(self, rows: list[Occurrence], shown: int) -> None:
        """Rows of the document as it is now, as they are computed: the first ones take the place
        of the grey rows (back at the top), the next ones follow them."""
        if shown == len(rows):
            self.model.wake_for(self._service.building)
            self.model.start_rows(rows)
            self.stack.setCurrentWidget(self.table)
            self.table.scrollToTop()
        else:
            self.model.append_rows(rows)
        self.stale_note.setText(f"Updating: {shown:,} rows shown so far.")
        self.stale_note.setVisible(True)

    def show_preview(self, preview: Preview) -> None:
        """Show ``preview``: at its first row, or, when it was built for "Next transition",
        at the clock change it reached for."""
        self.stale_note.setVisible(False)
        self.model.set_preview(preview)
        answer = self._service.answer
        missing = answer.without_calendar if answer is not None and answer.preview is preview else ""
        self.calendar_note.setText(f"⚠ Shown without the business calendar until it is complete: {missing}")
        self.calendar_note.setVisible(bool(missing))
        if preview.rows:
            self.stack.setCurrentWidget(self.table)
        else:
            self._show_message(
                "No occurrences from this point on.\n"
                "The schedule may have ended: check its end date, or preview from an earlier time."
            )
        answer = self._service.answer
        asked = answer is not None and answer.asked and answer.preview is preview
        if self._jump_pending and asked and answer is not None:
            self._jump_pending = False
            self._arrive(answer)
            return
        self._jump_pending = False
        # New rows (an edit, another From or row count): start from the first, not where the old rows were.
        self.table.scrollToTop()
        if self.notice.property("reach"):
            self.notice.setVisible(False)

    def show_failure(self, message: str) -> None:
        """The spec's problem, in place of the table (rows of an invalid spec would mislead)."""
        self.stale_note.setVisible(False)
        self.calendar_note.setVisible(False)
        self.model.set_preview(None)
        self._show_message(f"⚠ The preview cannot be shown until this is fixed:\n{message}")

    def _show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    # --- controls ---------------------------------------------------------------------------
    def start_time(self) -> datetime | None:
        """The chosen start (aware UTC), or None for now."""
        if self.from_choice.currentIndex() == 0:
            return None
        return datetime.fromtimestamp(self.from_edit.dateTime().toSecsSinceEpoch(), UTC)

    def set_start_time(self, start: datetime | None) -> None:
        if start is None:
            self.from_choice.setCurrentIndex(0)
            return
        self.from_edit.setDateTime(QDateTime.fromSecsSinceEpoch(int(start.timestamp()), QTimeZone.utc()))
        self.from_choice.setCurrentIndex(1)
        self._on_from_changed()

    def _on_from_changed(self) -> None:
        chosen = self.from_choice.currentIndex() == 1
        self.from_edit.setEnabled(chosen)
        self._service.set_start(self.start_time())

    def set_second_zone(self, name: str) -> None:
        """Show the second-zone column for ``name`` ('' removes it); a bad name is reported beside the field."""
        try:
            self.model.set_second_zone(name or None)
        except UserError as exc:
            self.zone_error.setText(f"Second zone: {exc}")
            self.zone_error.setVisible(True)
            return
        self.zone_error.setVisible(False)
        self._size_columns()

    def next_transition(self) -> int | None:
        """Select and scroll to the first separator row after the current row; its row.

        When there is none after it, the rows are built again on to the zone's next
        clock change (:meth:`PreviewService.reach_next_change`) and the table goes
        there when they arrive; None is returned then.
        """
        current = self.table.currentIndex().row()
        later = [r for r in self.model.separator_rows() if r > current]
        if later:
            return self._go_to(later[0])
        if self._still_building():
            return None
        if self.model.preview is None or not self.model.preview.rows:
            self._notify("No rows to look through: the preview is empty.")
            return None
        self._jump_pending = True
        self._service.reach_next_change()
        return None

    def _arrive(self, answer: Answer) -> None:
        """Go to the clock change the rows were built to reach, or say why they could not reach it."""
        reach, preview = answer.reach, answer.preview
        change = reach.change
        row = None
        if change is not None and reach.reached:
            row = next((r for r in self.model.separator_rows() if self.model.item(r) == change), None)
        if row is not None:
            self._go_to(row)
            self._notify(f"Showing {len(preview.rows):,} rows, to reach the clock change.", reach=True)
            return
        # Not reached: back to the first clock change among the rows, if any, else the first row.
        separators = self.model.separator_rows()
        if separators:
            self._go_to(separators[0])
        else:
            self.table.scrollToTop()
        if change is None:
            self._notify(f"{preview.spec.time_zone} has no clock change in the ten years after these rows.")
            return
        when = f"{day_label(transition_day(change))} ({transition_words(change)})"
        if reach.too_far:
            self._notify(
                f"The next clock change, {when}, is more than {MAX_ROWS:,} rows away: "
                "preview from a chosen time near it to see it."
            )
        else:
            self._notify(f"The schedule has no rows after the next clock change, {when}.")

    def _go_to(self, target: int) -> int:
        index = self.model.index(target, 0)
        self.table.setCurrentIndex(index)
        self.table.selectionModel().select(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        self.notice.setVisible(False)
        return target

    def selected_ids(self) -> list[str]:
        """Full ids of the selection: the id cells chosen, else each selected row's occurrence id."""
        indexes = sorted(self.table.selectionModel().selectedIndexes(), key=lambda i: (i.row(), i.column()))
        id_columns = {self.model.column_of(Column.OCCURRENCE_ID), self.model.column_of(Column.SLOT_ID)}
        chosen = [i for i in indexes if i.column() in id_columns]
        if (
            chosen
            and len({i.column() for i in indexes}) <= len(id_columns)
            and all(i.column() in id_columns for i in indexes)
        ):
            return [str(i.data(CopyRole)) for i in chosen if i.data(CopyRole)]
        rows = sorted({i.row() for i in indexes if not self.model.is_separator(i.row())})
        column = self.model.column_of(Column.OCCURRENCE_ID)
        return [str(self.model.index(r, column).data(CopyRole)) for r in rows]

    def copy_selection(self) -> str:
        """Put the selected ids on the clipboard, one per line; returns the text."""
        text = "\n".join(self.selected_ids())
        if text:
            QGuiApplication.clipboard().setText(text)
        return text

    # --- export -----------------------------------------------------------------------------
    def choose_export(self, fmt: str) -> None:
        label, file_filter, suffix = EXPORTS[fmt]
        preview = self.model.preview
        if self._still_building():
            return None
        if preview is None:
            self._notify("Nothing to export yet: the preview has no rows.")
            return
        suggested = str(self._ctx.workspace / f"{preview.spec.schedule_id}-preview{suffix}")
        path, _ = QFileDialog.getSaveFileName(self, f"Export {label.rstrip('…')}", suggested, file_filter)
        if path:
            self.export(fmt, path)

    def export(self, fmt: str, path: str | Path) -> Path | None:
        """Write the shown rows as ``fmt`` (csv, json, ics) to ``path``; None (with a message) on failure."""
        preview = self.model.preview
        if self._still_building():
            return None
        if preview is None:
            self._notify("Nothing to export yet: the preview has no rows.")
            return None
        # Imported here: the iCalendar library alone costs a tenth of the start-up.
        if fmt == "csv":
            from core.render.csvfmt import render_csv

            content = render_csv(preview)
        elif fmt == "json":
            from core.render.jsonfmt import render_json

            content = render_json(preview)
        elif fmt == "ics":
            from core.render.ics import render_ics

            content = render_ics(preview, stamp=self._ctx.clock.now())
        else:
            raise ValueError(f"unknown export format {fmt!r}")
        target = Path(path)
        try:
            target.write_text(content, encoding="utf-8", newline="")
        except OSError as exc:
            self._notify(f"Export: {target} cannot be written ({exc.strerror or exc}).")
            return None
        self._notify(f"Exported {len(preview.rows):,} rows to {target}.")
        return target

    def _still_building(self) -> bool:
        """True (and said under the table) while the rows shown are the first of a preview being built."""
        if self.model.preview is None and self.model.rowCount():
            self._notify("The preview is still being built: try again when all its rows are shown.")
            return True
        return False

    def _notify(self, text: str, *, reach: bool = False) -> None:
        """A line under the table; ``reach`` marks one about extended rows, which new rows take away."""
        self.notice.setText(text)
        self.notice.setProperty("reach", reach)
        self.notice.setVisible(True)

    def show_column(self, column: Column, shown: bool) -> None:
        """Show or hide one of the id columns (the header's menu)."""
        if shown:
            self._shown_ids.add(column)
        else:
            self._shown_ids.discard(column)
        action = self.column_actions[column]
        if action.isChecked() != shown:
            action.setChecked(shown)
        self._size_columns()

    # --- layout -----------------------------------------------------------------------------
    def _apply_spans(self) -> None:
        self.table.clearSpans()
        columns = self.model.columnCount()
        if columns > 1:
            for row in self.model.spanned_rows():
                self.table.setSpan(row, 0, 1, columns)

    def _size_columns(self) -> None:
        # Widths from sample text: measuring 5000 rows on every refresh would stall typing.
        fixed = QFontMetrics(tabular_font())
        plain = QFontMetrics(self.font())
        header = self.table.horizontalHeader()
        for i, column in enumerate(self.model.columns()):
            self.table.setColumnHidden(i, column in HIDDEN_AT_FIRST and column not in self._shown_ids)
            sample = _SAMPLE[column]
            if not sample:
                # Why takes what the others leave; the view cuts a long reason short (whole in the tooltip).
                header.setSectionResizeMode(i, QHeaderView.ResizeMode.Stretch)
                continue
            header.setSectionResizeMode(i, QHeaderView.ResizeMode.Interactive)
            metrics = plain if column is Column.STATUS else fixed
            width = max(metrics.horizontalAdvance(sample), plain.horizontalAdvance(column.value)) + 16
            self.table.setColumnWidth(i, width)
