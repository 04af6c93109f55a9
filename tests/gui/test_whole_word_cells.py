"""Cells with sentences in them (the preview's and the what-if's Why, the ledger's Last outcome)
are cut at a word's end when their column is narrow, never mid-word, and pointing at one shows
its whole text."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from monitor_support import FAILING_TASK, NO_RETRY, interval_spec, put, run_at
from PySide6.QtCore import QEvent, QModelIndex, Qt
from PySide6.QtGui import QHelpEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QApplication, QTableView, QToolTip
from shell_fixtures import window_fixture  # noqa: F401

from core.recurrence.occurrence import Occurrence
from scheduler_gui.context import AppContext
from scheduler_gui.elide import WholeWordsDelegate
from scheduler_gui.main_window import MainWindow
from scheduler_gui.monitor.occurrences_view import OccurrencesView
from scheduler_gui.monitor.schedules_view import SchedulesView
from scheduler_gui.preview.model import Column
from scheduler_gui.preview.whatif import WhatIfView
from scheduler_gui.workspace.document import SpecDocument

THANKSGIVING = """\
schema: scheduleSpec.v1
scheduleId: weekdays-ny
revision: 1
timeZone: America/New_York
kind: calendar
rule: FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0
start: 2027-01-01T00:00:00
gapPolicy: SHIFT_FORWARD
foldPolicy: FIRST_ONLY
businessCalendar:
  holidays: [US-NY]
holidayPolicy: NEXT_BUSINESS_DAY
"""


def _narrow(view: QTableView, column: int, width: int) -> None:
    """The column made ``width`` wide, as a person drags its header's edge."""
    view.horizontalHeader().setStretchLastSection(False)
    view.horizontalHeader().resizeSection(column, width)
    QApplication.processEvents()


def _pointed_at(view: QTableView, index: QModelIndex) -> str:
    """The tooltip that shows when the mouse rests on the cell."""
    QToolTip.hideText()
    at = view.visualRect(index).center()
    event = QHelpEvent(QEvent.Type.ToolTip, at, view.viewport().mapToGlobal(at))
    QApplication.sendEvent(view.viewport(), event)
    return QToolTip.text()


def _assert_whole_words(shown: str, full: str) -> None:
    assert shown != full and shown.endswith("…"), shown
    kept = shown[:-1]
    assert full.startswith(kept) and full[len(kept)] in " ·:,;", (shown, full)


def test_a_table_cell_is_cut_at_a_word_and_whole_in_its_tooltip(qtbot: Any) -> None:
    model = QStandardItemModel(1, 2)
    model.setHorizontalHeaderLabels(["When", "Why"])
    full = "Thanksgiving Day: moves to Fri 2027-11-26, which already runs"
    model.setItem(0, 0, QStandardItem("Thu 2027-11-25 09:00 EST"))
    why = QStandardItem(full)
    why.setToolTip("weekdays-ny/2027-11-25T09:00")
    model.setItem(0, 1, why)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    delegate = WholeWordsDelegate(view, headers=("Why",))
    view.setItemDelegate(delegate)
    view.show()
    qtbot.waitExposed(view)
    _narrow(view, 0, 40)  # not a Why column: left to the style's own eliding
    _narrow(view, 1, 160)
    _assert_whole_words(delegate.shown_text(view, model.index(0, 1)), full)
    assert delegate.shown_text(view, model.index(0, 0)) == "Thu 2027-11-25 09:00 EST"
    assert _pointed_at(view, model.index(0, 1)) == f"{full}\n\nweekdays-ny/2027-11-25T09:00"
    _narrow(view, 1, 1000)  # wide enough: the whole text, and the model's own tooltip alone
    assert delegate.shown_text(view, model.index(0, 1)) == full
    assert delegate.tooltip(view, model.index(0, 1)) == "weekdays-ny/2027-11-25T09:00"


def test_the_preview_why_column_cuts_the_holiday_at_a_word(window: MainWindow, ctx: AppContext, qtbot: Any) -> None:
    path: Path = ctx.workspace / "weekdays-ny.yaml"
    path.write_text(THANKSGIVING, encoding="utf-8")
    window.open_path(path, ask=False)
    panel = window.designer.preview
    panel.set_start_time(datetime(2027, 11, 22, tzinfo=UTC))
    window.show()
    qtbot.waitExposed(window)

    def arrived() -> bool:
        first = panel.model.item(0)
        return panel.model.preview is not None and isinstance(first, Occurrence) and first.nominal_local >= "2027-11-22"

    qtbot.waitUntil(arrived, timeout=10_000)
    why = panel.model.column_of(Column.WHY)
    status = panel.model.column_of(Column.STATUS)
    row = next(
        r for r in range(panel.model.rowCount()) if panel.model.index(r, status).data() == "⊘ skipped: duplicate"
    )
    index = panel.model.index(row, why)
    full = index.data()
    assert full.startswith("2027-11-25 is Thanksgiving Day in US-NY")
    _narrow(panel.table, why, 220)
    delegate = panel.table.itemDelegate()
    assert isinstance(delegate, WholeWordsDelegate)
    _assert_whole_words(delegate.shown_text(panel.table, index), full)
    assert _pointed_at(panel.table, index).startswith(full)


def test_the_what_if_why_column_cuts_at_a_word(document: SpecDocument, ctx: AppContext, qtbot: Any) -> None:
    view = WhatIfView(document, ctx)
    qtbot.addWidget(view)
    view.resize(900, 400)
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.computed, timeout=10_000):
        view.set_outage(datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 6, 4, tzinfo=UTC))
    index = view.model.index(0, 3)
    full = index.data()
    assert "only the newest run is made up" in full
    _narrow(view.table, 3, 200)
    delegate = view.table.itemDelegateForColumn(3)
    assert isinstance(delegate, WholeWordsDelegate)
    _assert_whole_words(delegate.shown_text(view.table, index), full)
    assert _pointed_at(view.table, index).startswith(full)
    view.wait()


@pytest.mark.parametrize("page", [OccurrencesView, SchedulesView], ids=["occurrences", "schedules"])
def test_the_ledger_last_outcome_cuts_at_a_word(qtbot: Any, ctx: AppContext, page: type) -> None:
    put(ctx, interval_spec("backup", FAILING_TASK, retry=NO_RETRY))
    run_at(ctx, 5.5)  # one failed attempt: "✖ exit 3"
    view = page(ctx)
    qtbot.addWidget(view)
    view.show()
    headers = [view.model.headerData(c, Qt.Orientation.Horizontal) for c in range(view.model.columnCount())]
    column = headers.index("Last outcome")

    def ended() -> list[int]:
        return [r for r in range(view.model.rowCount()) if (view.model.index(r, column).data() or "—") != "—"]

    qtbot.waitUntil(lambda: bool(ended()), timeout=20_000)
    index = view.model.index(ended()[0], column)
    view.table.scrollTo(index)
    full = index.data()
    assert " " in full
    _narrow(view.table, column, view.table.fontMetrics().horizontalAdvance(full))  # less than it needs, with margins
    delegate = view.table.itemDelegateForColumn(column)
    assert isinstance(delegate, WholeWordsDelegate)
    _assert_whole_words(delegate.shown_text(view.table, index), full)
    assert _pointed_at(view.table, index).startswith(full)
