"""The preview panel: refreshes on edits (back at its first row), reaches and jumps to clock
changes, fits the default window, exports what the core renders."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from consequence_support import click, open_designer, settle, widget_named
from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtTest import QTest
from shell_fixtures import window_fixture  # noqa: F401

from core.clock import FixedClock
from core.enums import Status
from core.recurrence.occurrence import Occurrence
from core.render.csvfmt import render_csv
from core.render.ics import render_ics
from core.render.jsonfmt import render_json
from core.time.zones import Transition
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow
from scheduler_gui.preview.model import Column
from scheduler_gui.preview.panel import PreviewPanel
from scheduler_gui.preview.service import PreviewService
from scheduler_gui.workspace.document import SpecDocument

#: Two weeks before the 2027 spring change: 14 rows reach it.
SPRING = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def english() -> None:
    before = QLocale()
    QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
    yield
    QLocale.setDefault(before)


@pytest.fixture
def service(document: SpecDocument, clock: FixedClock) -> PreviewService:
    svc = PreviewService(document, clock)
    yield svc
    svc.wait()


@pytest.fixture
def panel(service: PreviewService, ctx: AppContext, qtbot) -> PreviewPanel:
    with qtbot.waitSignal(service.ready, timeout=10_000):
        widget = PreviewPanel(service, ctx)
        qtbot.addWidget(widget)
    widget.resize(1000, 500)
    return widget


def _statuses(panel: PreviewPanel) -> list[str]:
    column = panel.model.column_of(Column.STATUS)
    return [
        panel.model.index(r, column).data() for r in range(panel.model.rowCount()) if not panel.model.is_separator(r)
    ]


def test_first_preview_fills_the_table(panel: PreviewPanel) -> None:
    assert panel.stack.currentWidget() is panel.table
    assert panel.model.occurrence_count() == panel.count_spin.value()
    assert panel.model.separator_rows()  # 50 days from 2027-03-01 cross the spring change


def test_editing_the_document_refreshes_the_table(
    panel: PreviewPanel, document: SpecDocument, service: PreviewService, qtbot
) -> None:
    assert "↷ shifted" not in _statuses(panel)
    with qtbot.waitSignal(service.ready, timeout=10_000):
        document.set_value("gapPolicy", "SHIFT_FORWARD")
    assert "↷ shifted" in _statuses(panel)
    with qtbot.waitSignal(service.ready, timeout=10_000):
        document.undo_stack.undo()
    assert "↷ shifted" not in _statuses(panel)
    assert "⊘ skipped: gap" in _statuses(panel)


def test_count_and_from_controls_drive_the_service(panel: PreviewPanel, service: PreviewService, qtbot) -> None:
    with qtbot.waitSignal(service.ready, timeout=10_000):
        panel.count_spin.setValue(10)
    # Ten rows end on 2027-03-11; the rows go on past the spring change on the 14th, three rows beyond it.
    assert panel.model.occurrence_count() == 15
    assert len(panel.model.separator_rows()) == 1
    assert not panel.from_edit.isEnabled()
    with qtbot.waitSignal(service.ready, timeout=10_000):
        panel.set_start_time(datetime(2027, 11, 1, 0, 0, tzinfo=UTC))
    assert panel.from_edit.isEnabled()
    first = panel.model.item(0)
    assert isinstance(first, Occurrence) and first.nominal_local == "2027-11-01T02:30:00"
    with qtbot.waitSignal(service.ready, timeout=10_000):
        panel.from_choice.setCurrentIndex(0)
    assert service.start == SPRING


def test_next_transition_scrolls_to_the_separator(panel: PreviewPanel, service: PreviewService, qtbot) -> None:
    panel.show()
    qtbot.waitExposed(panel)
    with qtbot.waitSignal(service.ready, timeout=10_000):
        panel.count_spin.setValue(300)  # reaches the fall change too
    separators = panel.model.separator_rows()
    assert len(separators) == 2
    first = panel.next_transition()
    assert first == separators[0]
    assert panel.table.currentIndex().row() == first
    assert isinstance(panel.model.item(first), Transition)
    assert panel.table.columnSpan(first, 0) == panel.model.columnCount()
    second = panel.next_transition()
    assert second == separators[1]
    viewport = panel.table.viewport().rect()
    assert viewport.intersects(panel.table.visualRect(panel.model.index(second, 0)))
    assert panel.table.verticalScrollBar().value() > 0
    # None after it among the rows: they are built on to the next spring change, and the table goes there.
    with qtbot.waitSignal(service.ready, timeout=10_000):
        assert panel.next_transition() is None
    third = panel.table.currentIndex().row()
    change = panel.model.item(third)
    assert isinstance(change, Transition) and change.utc == datetime(2028, 3, 12, 7, 0, tzinfo=UTC)
    assert panel.model.separator_rows() == [*separators, third]


def test_next_transition_without_one_says_so(
    panel: PreviewPanel, document: SpecDocument, service: PreviewService, qtbot
) -> None:
    with qtbot.waitSignal(service.ready, timeout=10_000):
        document.set_value("timeZone", "UTC")
    assert panel.model.occurrence_count() == 50  # nothing to reach for
    with qtbot.waitSignal(service.ready, timeout=10_000):
        assert panel.next_transition() is None
    assert panel.notice.text() == "UTC has no clock change in the ten years after these rows."
    assert panel.model.occurrence_count() == 50


@pytest.mark.parametrize("fmt", ["csv", "json", "ics"])
def test_export_matches_the_core_renderers(panel: PreviewPanel, ctx: AppContext, tmp_path: Path, fmt: str) -> None:
    preview = panel.model.preview
    assert preview is not None
    expected = {
        "csv": render_csv(preview),
        "json": render_json(preview),
        "ics": render_ics(preview, stamp=ctx.clock.now()),
    }[fmt]
    target = panel.export(fmt, tmp_path / f"out.{fmt}")
    assert target is not None
    assert target.read_bytes().decode("utf-8") == expected  # byte for byte: .ics lines end in CRLF
    assert "Exported 50 rows" in panel.notice.text()


def test_export_to_an_unwritable_place_says_why(panel: PreviewPanel, tmp_path: Path) -> None:
    assert panel.export("csv", tmp_path / "missing-folder" / "out.csv") is None
    assert "cannot be written" in panel.notice.text()


def test_invalid_spec_shows_its_message(
    panel: PreviewPanel, document: SpecDocument, service: PreviewService, qtbot
) -> None:
    with qtbot.waitSignal(service.failed, timeout=10_000):
        document.set_value("timeZone", "EST")
    assert panel.stack.currentWidget() is panel.message
    assert "timeZone" in panel.message.text() and "abbreviation" in panel.message.text()
    assert panel.model.rowCount() == 0
    assert panel.export("csv", "/nonexistent/never.csv") is None
    with qtbot.waitSignal(service.ready, timeout=10_000):
        document.undo_stack.undo()
    assert panel.stack.currentWidget() is panel.table


def test_empty_state(panel: PreviewPanel, document: SpecDocument, service: PreviewService, qtbot) -> None:
    with qtbot.waitSignal(service.ready, timeout=10_000):
        document.set_value("end", "2026-06-01T00:00:00")
    assert panel.stack.currentWidget() is panel.message
    assert panel.message.text().startswith("No occurrences from this point on.")


def test_second_zone_and_bad_zone(panel: PreviewPanel) -> None:
    panel.zone_choice.set_zone("Asia/Kolkata")
    column = panel.model.column_of(Column.SECOND)
    assert column >= 0
    assert panel.model.index(0, column).data() == "Tue 2027-03-02 13:00 IST +05:30"  # 02:30 EST = 07:30Z
    assert panel.zone_error.isHidden()
    panel.zone_choice.set_zone("Asia/Kolkatta")
    assert not panel.zone_error.isHidden()
    assert "did you mean Asia/Kolkata" in panel.zone_error.text()
    assert panel.model.second_zone == "Asia/Kolkata"  # a bad name changes nothing
    panel.zone_choice.set_zone("")
    assert panel.model.column_of(Column.SECOND) == -1


def test_copy_selected_ids(panel: PreviewPanel, qtbot) -> None:
    panel.show()
    qtbot.waitExposed(panel)
    rows = [panel.model.item(r) for r in (0, 1)]
    assert all(isinstance(r, Occurrence) for r in rows)
    panel.table.selectRow(0)
    panel.table.selectionModel().select(
        panel.model.index(1, 0),
        panel.table.selectionModel().SelectionFlag.Select | panel.table.selectionModel().SelectionFlag.Rows,
    )
    panel.table.setFocus()
    qtbot.keyClick(panel.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "\n".join(r.occurrence_id for r in rows)  # type: ignore[union-attr]
    # Only the slot id cell chosen: the slot id is copied.
    slot = panel.model.column_of(Column.SLOT_ID)
    panel.table.selectionModel().clearSelection()
    panel.table.selectionModel().select(panel.model.index(0, slot), panel.table.selectionModel().SelectionFlag.Select)
    assert panel.copy_selection() == rows[0].logical_slot_id  # type: ignore[union-attr]


def test_busy_indicator_follows_the_service(panel: PreviewPanel, service: PreviewService, qtbot) -> None:
    seen: list[bool] = []
    service.busyChanged.connect(lambda busy: seen.append(panel.busy.isVisibleTo(panel)))
    with qtbot.waitSignal(service.ready, timeout=10_000):
        service.refresh_now()
    assert seen == [True, False]


def test_every_control_is_named_and_explained(panel: PreviewPanel) -> None:
    for widget in (
        panel.from_choice,
        panel.from_edit,
        panel.count_spin,
        panel.next_button,
        panel.zone_choice.picker.edit,  # the second zone's field, and its buttons
        panel.zone_choice.picker.list_button,
        panel.zone_choice.clear_button,
        panel.export_button,
        panel.table,
    ):
        assert widget.accessibleName(), widget
        assert widget.toolTip() and widget.accessibleDescription(), widget


def test_five_thousand_rows_refresh(panel: PreviewPanel, service: PreviewService, qtbot) -> None:
    with qtbot.waitSignal(service.ready, timeout=30_000):
        panel.count_spin.setValue(5000)
    assert panel.model.occurrence_count() == 5000
    assert all(s in ("✓ scheduled", "⊘ skipped: gap") for s in _statuses(panel))
    assert sum(1 for s in _statuses(panel) if s == "⊘ skipped: gap") >= 13
    assert Status.SKIPPED_GAP.value == "SKIPPED_GAP"


def test_second_zone_can_be_chosen_and_cleared(qtbot) -> None:
    from scheduler_gui.preview.zone_choice import ZoneChoice

    choice = ZoneChoice()
    qtbot.addWidget(choice)
    with qtbot.waitSignal(choice.zoneChosen) as blocker:
        choice.set_zone("Asia/Tokyo")
    assert blocker.args == ["Asia/Tokyo"]
    with qtbot.waitSignal(choice.zoneChosen) as blocker:
        choice.clear_button.click()
    assert blocker.args == [""]
    assert choice.zone() == ""


# --- rows that reach the next clock change, and a table that starts at its first row ----------

AFTER_SPRING = datetime(2027, 3, 20, 0, 0, tzinfo=UTC)
FALL_2027 = datetime(2027, 11, 7, 6, 0, tzinfo=UTC)


def _press_f6(panel: PreviewPanel, service: PreviewService, qtbot) -> None:
    """Press F6 in the table, as a person does, and wait for the rows it asks for."""
    panel.table.setFocus()
    with qtbot.waitSignal(service.ready, timeout=20_000):
        qtbot.keyClick(panel.table, Qt.Key.Key_F6)


def _changes(panel: PreviewPanel) -> list[datetime]:
    return [panel.model.item(r).utc for r in panel.model.separator_rows()]  # type: ignore[union-attr]


def test_the_rows_reach_the_next_clock_change(panel: PreviewPanel, service: PreviewService, qtbot) -> None:
    with qtbot.waitSignal(service.ready, timeout=10_000):
        panel.set_start_time(AFTER_SPRING)
    # 50 days from 20 March meet no change; the rows go on to the fall change and three rows past it.
    assert _changes(panel) == [FALL_2027]
    assert panel.model.occurrence_count() == 235  # 2027-03-20 to 2027-11-09
    assert panel.count_spin.value() == 50


def test_a_zone_without_clock_changes_keeps_the_rows_asked_for(
    panel: PreviewPanel, document: SpecDocument, service: PreviewService, qtbot
) -> None:
    panel.show()  # F6 is the button's shortcut: the button must be on screen
    qtbot.waitExposed(panel)
    with qtbot.waitSignal(service.ready, timeout=10_000):
        document.set_value("timeZone", "America/Phoenix")
    assert panel.model.occurrence_count() == 50 and _changes(panel) == []
    _press_f6(panel, service, qtbot)
    assert panel.notice.text() == "America/Phoenix has no clock change in the ten years after these rows."


def test_next_transition_extends_the_rows_to_reach_it(
    panel: PreviewPanel, document: SpecDocument, service: PreviewService, qtbot
) -> None:
    panel.show()
    qtbot.waitExposed(panel)
    with qtbot.waitSignal(service.ready, timeout=10_000):
        document.set_value("rule", "FREQ=HOURLY;INTERVAL=2;BYMINUTE=30")
    with qtbot.waitSignal(service.ready, timeout=10_000):
        panel.set_start_time(AFTER_SPRING)
    # Every two hours, the fall change is about 2800 rows away: further than the rows reach on their own.
    assert panel.model.occurrence_count() == 50 and _changes(panel) == []
    _press_f6(panel, service, qtbot)
    row = panel.table.currentIndex().row()
    change = panel.model.item(row)
    assert isinstance(change, Transition) and change.utc == FALL_2027
    assert panel.table.viewport().rect().intersects(panel.table.visualRect(panel.model.index(row, 0)))
    shown = panel.model.occurrence_count()
    assert 2700 < shown <= 5000
    assert panel.notice.text() == f"Showing {shown:,} rows, to reach the clock change."
    # The next edit starts over: the rows asked for, from the first.
    with qtbot.waitSignal(service.ready, timeout=10_000):
        document.set_value("rule", "FREQ=HOURLY;INTERVAL=2;BYMINUTE=45")
    assert panel.model.occurrence_count() == 50
    assert panel.table.verticalScrollBar().value() == 0
    assert panel.notice.isHidden()


def test_next_transition_further_than_the_rows_can_reach_says_so(
    panel: PreviewPanel, document: SpecDocument, service: PreviewService, qtbot
) -> None:
    panel.show()  # F6 is the button's shortcut: the button must be on screen
    qtbot.waitExposed(panel)
    with qtbot.waitSignal(service.ready, timeout=10_000):
        document.set_value("rule", "FREQ=MINUTELY;INTERVAL=15")
    with qtbot.waitSignal(service.ready, timeout=10_000):
        panel.set_start_time(AFTER_SPRING)
    _press_f6(panel, service, qtbot)
    assert panel.notice.text() == (
        "The next clock change, Sun 2027-11-07 (−1 h), is more than 5,000 rows away: "
        "preview from a chosen time near it to see it."
    )
    assert panel.model.occurrence_count() == 50


def test_an_edit_brings_the_table_back_to_its_first_row(document: SpecDocument, ctx: AppContext, qtbot) -> None:
    with open_designer(document, ctx, qtbot) as page:
        preview = page.preview
        rows = widget_named(page, "Rows")
        rows.setFocus()
        rows.selectAll()  # type: ignore[attr-defined]
        with qtbot.waitSignal(page.service.ready, timeout=10_000):
            qtbot.keyClicks(rows, "300")
            qtbot.keyClick(rows, Qt.Key.Key_Return)
        preview.table.setFocus()
        qtbot.keyClick(preview.table, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
        assert preview.table.verticalScrollBar().value() > 0
        click(widget_named(page, "Missing time (clocks jump forward): Next valid time"))
        settle(page, qtbot)
        assert document.value("gapPolicy") == "SHIFT_FORWARD"
        assert preview.table.verticalScrollBar().value() == 0
        first = preview.table.visualRect(preview.model.index(0, 0))
        assert preview.table.viewport().rect().contains(first.topLeft())


def test_why_and_export_are_not_clipped_at_the_default_size(window: MainWindow, qtbot) -> None:
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    designer = window.designer
    assert designer is not None
    designer.service.refresh_now()
    qtbot.waitUntil(lambda: not designer.service.pending and designer.service.latest is not None, timeout=10_000)
    qtbot.wait(50)  # let the layout settle
    panel = designer.preview
    # The controls fit the width the preview gets, even while the busy bar shows: nothing to scroll to.
    panel.busy.setVisible(True)
    assert panel.minimumSizeHint().width() <= panel.parentWidget().width()
    panel.busy.setVisible(False)
    export = panel.export_button
    assert export.visibleRegion().boundingRect() == export.rect()
    assert export.mapTo(window, export.rect().bottomRight()).x() < window.width()
    for control in (panel.from_choice, panel.from_edit, panel.count_spin, panel.next_button, panel.zone_choice):
        assert control.visibleRegion().boundingRect() == control.rect(), control.accessibleName()
    header = panel.table.horizontalHeader()
    why = panel.model.column_of(Column.WHY)
    right = header.sectionViewportPosition(why) + header.sectionSize(why)
    assert right <= panel.table.viewport().width()
    assert header.sectionSize(why) >= 150
    # A long reason is cut short in the cell and whole in its tooltip.
    skipped = next(
        r for r in range(panel.model.rowCount()) if getattr(panel.model.item(r), "status", None) is Status.SKIPPED_GAP
    )
    reason = panel.model.item(skipped).reason  # type: ignore[union-attr]
    assert reason and reason in panel.model.index(skipped, why).data(Qt.ItemDataRole.ToolTipRole)


# --- rows that say what a date does ---------------------------------------------------------------

_SPEC = """\
schema: scheduleSpec.v1
scheduleId: {sid}
revision: 1
timeZone: America/New_York
kind: calendar
rule: {rule}
start: 2027-01-01T00:00:00
gapPolicy: SHIFT_FORWARD
foldPolicy: FIRST_ONLY
"""
_THANKSGIVING = "businessCalendar:\n  holidays: [US-NY]\nholidayPolicy: NEXT_BUSINESS_DAY\n"


def _opened(window: MainWindow, qtbot, path: Path, text: str, start: datetime, first: str) -> PreviewPanel:
    """``text`` saved to ``path`` and opened, its preview from ``start``, whose first row is on ``first``."""
    path.write_text(text, encoding="utf-8")
    window.open_path(path, ask=False)
    panel = window.designer.preview
    panel.set_start_time(start)

    def arrived() -> bool:
        # The whole preview, not only its first streamed rows: the missing dates and clock changes come with it.
        row = panel.model.item(0)
        return panel.model.preview is not None and isinstance(row, Occurrence) and row.nominal_local.startswith(first)

    qtbot.waitUntil(arrived, timeout=10_000)
    return panel


def _texts(panel: PreviewPanel, column: Column) -> list[str]:
    at = panel.model.column_of(column)
    return [
        panel.model.index(r, at if not panel.model.is_separator(r) else 0).data() for r in range(panel.model.rowCount())
    ]


def test_a_holiday_moved_onto_a_run_leads_with_the_holiday(window: MainWindow, ctx: AppContext, qtbot) -> None:
    text = _SPEC.format(sid="weekdays-ny", rule="FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0") + _THANKSGIVING
    panel = _opened(
        window, qtbot, ctx.workspace / "weekdays-ny.yaml", text, datetime(2027, 11, 22, tzinfo=UTC), "2027-11-22"
    )
    why = _texts(panel, Column.WHY)
    statuses = _texts(panel, Column.STATUS)
    thursday = statuses.index("⊘ skipped: duplicate")
    assert why[thursday].startswith(
        "2027-11-25 is Thanksgiving Day in US-NY: moved to the next business day, Fri 2027-11-26, which already runs"
    )


def test_omit_gives_each_missing_date_a_row(window: MainWindow, ctx: AppContext, qtbot) -> None:
    text = _SPEC.format(sid="monthly-31", rule="FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=9;BYMINUTE=0")
    panel = _opened(
        window, qtbot, ctx.workspace / "monthly-31.yaml", text, datetime(2027, 1, 1, tzinfo=UTC), "2027-01-31"
    )
    assert _texts(panel, Column.LOCAL)[:8] == [
        "Sun 2027-01-31 09:00 EST",
        "⊘ 2027-02-31 does not exist: no run (invalidDatePolicy OMIT)",
        "── clocks jump forward 1 h · 2027-03-14 07:00Z · EST→EDT ──",
        "Wed 2027-03-31 09:00 EDT",
        "⊘ 2027-04-31 does not exist: no run (invalidDatePolicy OMIT)",
        "Mon 2027-05-31 09:00 EDT",
        "⊘ 2027-06-31 does not exist: no run (invalidDatePolicy OMIT)",
        "Sat 2027-07-31 09:00 EDT",
    ]
    notes = [r for r in range(panel.model.rowCount()) if panel.model.item(r).__class__.__name__ == "MissingDate"]
    assert all(panel.table.columnSpan(r, 0) == panel.model.columnCount() for r in notes)
    assert panel.model.separator_rows()[0] == 2  # Next transition stops at clock changes only
    assert panel.model.occurrence_count() == panel.count_spin.value()  # a note is not an occurrence


def test_rows_of_the_document_before_an_edit_are_grey_at_once(window: MainWindow, qtbot) -> None:
    from PySide6.QtWidgets import QWidget

    from scheduler_gui.status_style import GREY

    panel = window.designer.preview
    service = window.designer.service
    qtbot.waitUntil(lambda: panel.model.occurrence_count() > 0 and not service.pending, timeout=10_000)
    window.show()
    qtbot.waitExposed(window)
    status = panel.model.column_of(Column.STATUS)
    assert not panel.model.stale and not panel.stale_note.isVisible()
    rule = next(w for w in window.designer.findChildren(QWidget) if w.accessibleName() == "Hours")
    rule.setFocus()
    rule.selectAll()
    with qtbot.waitSignal(service.ready, timeout=10_000):
        QTest.keyClicks(rule, "7")
        # Before the new rows are built, the old ones are grey and said to be out of date.
        assert panel.model.stale and panel.stale_note.isVisible()
        colours = {panel.model.index(r, status).data(Qt.ItemDataRole.ForegroundRole).color().name() for r in (0, 1)}
        assert colours == {QColor(GREY).name()}
    assert not panel.model.stale and not panel.stale_note.isVisible()
    assert panel.model.index(0, status).data(Qt.ItemDataRole.ForegroundRole) is None  # ✓ scheduled again
