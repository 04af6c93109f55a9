"""The designer's "Business days" section (scheduler_gui.designer.business_days), used as a person
does: turned on, it writes a calendar with the default weekend and waits for the policy; a country
or region is found by typing part of its name and pressing Enter; weekend days are clicked; closed
and open dates are typed and added with Enter, and removed with Delete; the policy is chosen; every
step is one Ctrl+Z; the saved file has exactly the spec's keys and keeps the person's comments."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from a11y_support import a11y_problems
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QToolButton,
)
from shell_fixtures import window_fixture  # noqa: F401
from typing_support import named, problem_text

from core.spec.files import load_text
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow

CTRL = Qt.KeyboardModifier.ControlModifier
COMMENTED = """\
# Payroll export: the person's own comments stay where they are.
schema: scheduleSpec.v1
scheduleId: payroll-export
revision: 1
title: Payroll export
timeZone: Europe/Berlin   # the office's zone
kind: calendar
rule: FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=9;BYMINUTE=0
start: 2027-01-01T00:00:00
exclude: [2027-06-01]     # a one-off
gapPolicy: SKIP
foldPolicy: FIRST_ONLY
task:
  argv: [/bin/true]
"""


@pytest.fixture
def shown(window: MainWindow, ctx: AppContext, qtbot: Any) -> MainWindow:
    """The window on a commented file of the workspace, shown and active."""
    path = ctx.workspace / "payroll-export.yaml"
    path.write_text(COMMENTED, encoding="utf-8")
    assert window.open_path(path, ask=False)
    window.resize(1280, 900)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    return window


def section(window: MainWindow) -> Any:
    assert window.designer is not None
    return window.designer.business_section


def open_section(qtbot: Any, window: MainWindow) -> None:
    qtbot.mouseClick(section(window).button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.designer.business_days.isVisible())


def calendar(window: MainWindow) -> Any:
    assert window.document is not None
    return window.document.value("businessCalendar")


def type_enter(qtbot: Any, window: MainWindow, name: str, text: str) -> None:
    field = named(window, name)
    assert isinstance(field, QLineEdit)
    field.setFocus()
    qtbot.keyClicks(field, text)
    QTest.keyClick(field, Qt.Key.Key_Return)


def click(qtbot: Any, window: MainWindow, name: str) -> None:
    button = named(window, name)
    assert isinstance(button, QAbstractButton)
    at = button.rect().center()
    if isinstance(button, QCheckBox):  # on its words: a check box takes the row's width
        at = QPoint(button.fontMetrics().horizontalAdvance(button.text()) // 2 + 20, button.height() // 2)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=at)


def undo(window: MainWindow) -> None:
    """Ctrl+Z from outside any text field (a text field keeps Ctrl+Z for its own text)."""
    window.sidebar.schedule_view.setFocus()
    QTest.keyClick(window, Qt.Key.Key_Z, CTRL)
    QApplication.processEvents()


def rows(window: MainWindow, name: str) -> list[str]:
    view = named(window, name)
    assert isinstance(view, QListWidget)
    return [view.item(i).text() for i in range(view.count())]


def test_a_person_builds_a_calendar_step_by_step_and_undoes_each_step(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    doc = window.document
    assert doc is not None
    assert section(window).button.text().startswith("Business days ▸   off")
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    assert calendar(window) == {"weekend": ["SA", "SU"]} and "holidayPolicy" not in doc.data
    # No policy is chosen for the person: Save waits and says what is missing.
    assert not window.acts.save.isEnabled()
    assert "holidayPolicy" in window.acts.save.toolTip() and "choose" in window.acts.save.toolTip()
    assert "no silent default" in problem_text(window, "On a closed day")
    assert [b.isChecked() for b in window.findChildren(QToolButton) if b.accessibleName().startswith("Weekend")] == [
        False, False, False, False, False, True, True,
    ]  # fmt: skip

    type_enter(qtbot, window, "Public holidays: search", "berl")
    assert calendar(window)["holidays"] == ["DE-BE"]
    assert rows(window, "Public holidays of") == ["Germany: Berlin (DE-BE)"]
    assert named(window, "Public holidays: search").text() == ""  # ready for the next one
    click(qtbot, window, "Weekend: Friday")
    click(qtbot, window, "Weekend: Sunday")
    assert calendar(window)["weekend"] == ["FR", "SA"]
    type_enter(qtbot, window, "Closed on", "2027-12-24")
    type_enter(qtbot, window, "Open on", "2027-12-27")
    assert rows(window, "Closed on: dates") == ["Fri 2027-12-24"] and rows(window, "Open on: dates") == [
        "Mon 2027-12-27"
    ]
    combo = named(window, "On a closed day")
    assert isinstance(combo, QComboBox) and combo.currentIndex() == -1
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)  # Skip
    QTest.keyClick(combo, Qt.Key.Key_Down)  # Next business day
    assert doc.value("holidayPolicy") == "NEXT_BUSINESS_DAY" and combo.currentText() == "Next business day"
    assert window.acts.save.isEnabled()
    assert section(window).button.accessibleName() == "Business days — DE-BE · next business day"

    window.acts.save.trigger()
    assert not doc.dirty
    text = (window.document.path or Path()).read_text(encoding="utf-8")
    saved = load_text(text, "saved")
    assert saved["businessCalendar"] == {
        "holidays": ["DE-BE"],
        "weekend": ["FR", "SA"],
        "closed": ["2027-12-24"],
        "open": ["2027-12-27"],
    }
    assert saved["holidayPolicy"] == "NEXT_BUSINESS_DAY"
    assert set(saved) - set(load_text(COMMENTED, "before")) == {"businessCalendar", "holidayPolicy"}
    for line in (
        "# Payroll export: the person's own comments stay where they are.",
        "# the office's zone",
        "# a one-off",
    ):
        assert line in text
    # The calendar comes after exclude, in the spec's order.
    assert text.index("exclude:") < text.index("businessCalendar:") < text.index("holidayPolicy:")

    # Each step is one Ctrl+Z, newest first.
    undo(window)
    assert doc.value("holidayPolicy") == "SKIP"
    undo(window)
    assert "holidayPolicy" not in doc.data and combo.currentIndex() == -1 and not window.acts.save.isEnabled()
    undo(window)
    assert "open" not in calendar(window) and rows(window, "Open on: dates") == []
    undo(window)
    assert "closed" not in calendar(window)
    undo(window)
    assert calendar(window)["weekend"] == ["FR", "SA", "SU"]
    assert named(window, "Weekend: Sunday").isChecked()
    undo(window)
    assert calendar(window)["weekend"] == ["SA", "SU"]
    undo(window)
    assert calendar(window) == {"weekend": ["SA", "SU"]} and rows(window, "Public holidays of") == []
    undo(window)
    assert calendar(window) is None and doc.dirty  # saved with the calendar
    check = named(window, "Use a business calendar")
    assert isinstance(check, QCheckBox) and not check.isChecked()
    assert window.acts.save.isEnabled()  # nothing is missing any more


def test_dates_and_codes_are_removed_with_delete_or_the_button(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    for day in ("2027-12-31", "2027-12-24"):
        type_enter(qtbot, window, "Closed on", day)
    assert calendar(window)["closed"] == ["2027-12-24", "2027-12-31"]  # kept in date order
    view = named(window, "Closed on: dates")
    assert isinstance(view, QListWidget)
    view.setFocus()
    view.setCurrentRow(0)
    QTest.keyClick(view, Qt.Key.Key_Delete)
    assert calendar(window)["closed"] == ["2027-12-31"]
    for text in ("new york", "JP"):
        type_enter(qtbot, window, "Public holidays: search", text)
    assert calendar(window)["holidays"] == ["US-NY", "JP"]
    codes = named(window, "Public holidays of")
    assert isinstance(codes, QListWidget)
    codes.setCurrentRow(0)
    click(qtbot, window, "Public holidays of: remove")
    assert calendar(window)["holidays"] == ["JP"]


def test_the_search_goes_down_its_matches_and_says_when_nothing_matches(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    search = named(window, "Public holidays: search")
    assert isinstance(search, QLineEdit)
    search.setFocus()
    qtbot.keyClicks(search, "germany")
    matches = rows(window, "Public holidays: matches")
    assert matches[0] == "Germany (DE)"
    QTest.keyClick(search, Qt.Key.Key_Down)
    QTest.keyClick(search, Qt.Key.Key_Return)
    assert calendar(window)["holidays"] == [matches[1].rsplit("(", 1)[1].rstrip(")")]
    qtbot.keyClicks(search, "atlantis")
    assert "No country or region" in problem_text(window, "Public holidays: search")
    QTest.keyClick(search, Qt.Key.Key_Return)
    assert len(calendar(window)["holidays"]) == 1


def test_a_date_that_does_not_exist_is_said_and_not_added(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    type_enter(qtbot, window, "Closed on", "2027-02-30")
    assert "February 2027 has 28 days" in problem_text(window, "Closed on")
    assert "closed" not in calendar(window)


def test_a_file_with_a_calendar_but_no_policy_opens_it_and_cannot_be_saved(
    window: MainWindow, ctx: AppContext, qtbot: Any
) -> None:
    path = ctx.workspace / "payroll.yaml"
    path.write_text(COMMENTED + "businessCalendar:\n  holidays: [de-be]\n", encoding="utf-8")
    assert window.open_path(path, ask=False)
    assert window.designer is not None and window.designer.business_section.is_open
    assert not window.acts.save.isEnabled()
    assert "holidayPolicy" in window.acts.save.toolTip()
    assert rows(window, "Public holidays of") == ["de-be ⚠ not known"]
    codes = named(window, "Public holidays of")
    assert isinstance(codes, QListWidget) and "DE-BE" in codes.item(0).toolTip()  # did you mean


def test_turning_it_off_takes_both_keys_out_in_one_step(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    doc = window.document
    assert doc is not None
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    combo = named(window, "On a closed day")
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)
    assert doc.value("holidayPolicy") == "SKIP"
    meaning = named(window, "On a closed day: what it does")
    assert isinstance(meaning, QLabel) and meaning.text().startswith("→ ")
    click(qtbot, window, "Use a business calendar")
    assert "businessCalendar" not in doc.data and "holidayPolicy" not in doc.data
    undo(window)
    assert calendar(window) == {"weekend": ["SA", "SU"]} and doc.value("holidayPolicy") == "SKIP"


def test_the_section_renders_without_clipping(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    type_enter(qtbot, window, "Public holidays: search", "US-NY")
    type_enter(qtbot, window, "Closed on", "2027-12-24")
    box = window.designer.business_days
    for _ in range(3):  # the layouts follow the matches list going away, one level per round
        QApplication.processEvents()
    for widget in box.findChildren(QLabel):
        if widget.isVisible() and not widget.wordWrap() and widget.text():
            assert widget.width() >= widget.sizeHint().width(), widget.accessibleName()
    box.grab().save("/tmp/business-days.png")


def test_every_control_is_named_and_tab_reads_the_section_in_order(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    type_enter(qtbot, window, "Public holidays: search", "US-NY")
    type_enter(qtbot, window, "Closed on", "2027-12-24")
    qtbot.keyClicks(named(window, "Public holidays: search"), "new")  # the matches are shown
    box = window.designer.business_days
    assert a11y_problems(box) == []
    start = named(window, "Use a business calendar")
    start.setFocus()
    seen = []
    for _ in range(17):
        focused = QApplication.focusWidget()
        seen.append(focused.accessibleName())
        QTest.keyClick(focused, Qt.Key.Key_Tab)
    assert seen == [
        "Use a business calendar",
        "Public holidays: search",
        "Public holidays: matches",
        "Public holidays of",
        "Public holidays of: remove",
        *(f"Weekend: {day}" for day in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")),
        "On a closed day",
        "Closed on",
        "Closed on: pick a day",
        "Closed on: add",
        "Closed on: dates",
    ]


def test_an_interval_schedule_has_no_business_days(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    doc = window.document
    assert doc is not None
    open_section(qtbot, window)
    kind = named(window, "Kind")
    assert isinstance(kind, QComboBox)
    kind.setFocus()
    QTest.keyClick(kind, Qt.Key.Key_Down)  # Interval
    assert doc.value("kind") == "interval"
    check = named(window, "Use a business calendar")
    assert isinstance(check, QCheckBox) and not check.isEnabled() and not check.isChecked()
    meaning = named(window, "Business days: meaning")
    assert isinstance(meaning, QLabel) and meaning.text().startswith("Business days apply to calendar schedules")


def test_the_year_view_marks_closed_days_with_their_reason(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    type_enter(qtbot, window, "Public holidays: search", "US-NY")
    type_enter(qtbot, window, "Closed on", "2027-12-30")
    type_enter(qtbot, window, "Open on", "2027-11-27")
    view = window.designer.business_days.year_view
    assert view.year == 2027  # the preview's year
    grid = view.grid
    assert grid.accessibleDescription().startswith("2027: ")
    assert "public holidays" in grid.accessibleDescription() and "1 closed date" in grid.accessibleDescription()
    thanksgiving = grid.day_rect(date(2027, 11, 25)).center()
    assert grid.tip_at(thanksgiving) == "Thu 2027-11-25: Thanksgiving Day in US-NY"
    assert grid.tip_at(grid.day_rect(date(2027, 12, 30)).center()) == "Thu 2027-12-30: your closed date"
    assert (
        grid.tip_at(grid.day_rect(date(2027, 12, 24)).center()) == "Fri 2027-12-24: Christmas Day (observed) in US-NY"
    )
    assert grid.tip_at(grid.day_rect(date(2027, 11, 27)).center()) == (
        "Sat 2027-11-27: open despite weekend (a business day)"
    )
    assert grid.tip_at(grid.day_rect(date(2027, 11, 24)).center()) == "Wed 2027-11-24: a business day"
    click(qtbot, window, "Year view: next year")
    assert view.year == 2028 and grid.tip_at(grid.day_rect(date(2028, 11, 23)).center()).endswith(
        "Thanksgiving Day in US-NY"
    )
    for _ in range(3):
        QApplication.processEvents()
    window.designer.business_days.grab().save("/tmp/business-days-year.png")


def test_the_section_fits_the_default_window(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    window.resize(1280, 800)
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    type_enter(qtbot, window, "Public holidays: search", "berlin")
    for _ in range(3):
        QApplication.processEvents()
    area = window.designer.settings_area
    assert area.horizontalScrollBar().maximum() == 0  # nothing cut off on the right, nothing to scroll sideways
    area.ensureWidgetVisible(window.designer.business_days.year_view)
    window.grab().save("/tmp/business-days-window.png")


def consequence(qtbot: Any, window: MainWindow) -> str:
    box = window.designer.business_days
    qtbot.waitUntil(lambda: not box.pending)  # worked out off the GUI thread
    line = named(window, "On a closed day: what it does")
    assert isinstance(line, QLabel)
    return line.text()


def test_the_policy_says_what_it_does_to_the_next_holiday(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    doc = window.document
    assert doc is not None
    doc.set_values(
        {"timeZone": "America/New_York", "rule": "FREQ=WEEKLY;BYDAY=TH;BYHOUR=9;BYMINUTE=0", "exclude": None},
        label="Thursdays in New York",
    )
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    type_enter(qtbot, window, "Public holidays: search", "new york")
    # Before a choice: what each choice would do to the next holiday the schedule meets.
    assert consequence(qtbot, window) == (
        "→ Not chosen yet. Skip: Thu 2027-11-11, Veterans Day: does not run; "
        "Next business day: Thu 2027-11-11, Veterans Day: runs Fri 2027-11-12 09:00 instead; "
        "Previous business day: Thu 2027-11-11, Veterans Day: runs Wed 2027-11-10 09:00 instead."
    )
    combo = named(window, "On a closed day")
    assert isinstance(combo, QComboBox)
    assert combo.itemData(1, Qt.ItemDataRole.ToolTipRole).endswith(
        "Next: Thu 2027-11-11, Veterans Day: runs Fri 2027-11-12 09:00 instead."
    )
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)
    QTest.keyClick(combo, Qt.Key.Key_Down)
    assert consequence(qtbot, window) == (
        "→ On public holidays in US-NY, Saturdays and Sundays, a run moves to the next business day at the same "
        "time. Next: Thu 2027-11-11, Veterans Day: runs Fri 2027-11-12 09:00 instead."
    )
    window.designer.business_days.grab().save("/tmp/business-days-consequence.png")


def test_switching_to_an_interval_takes_the_calendar_out_and_undo_brings_it_back(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    doc = window.document
    assert doc is not None
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    combo = named(window, "On a closed day")
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)
    kind = named(window, "Kind")
    assert isinstance(kind, QComboBox)
    kind.setFocus()
    QTest.keyClick(kind, Qt.Key.Key_Down)  # Interval
    assert doc.value("kind") == "interval" and doc.valid
    assert "businessCalendar" not in doc.data and "holidayPolicy" not in doc.data
    assert not named(window, "Use a business calendar").isEnabled()
    undo(window)
    assert doc.value("kind") == "calendar" and calendar(window) == {"weekend": ["SA", "SU"]}
    assert named(window, "Use a business calendar").isChecked()


def test_a_week_of_only_weekend_is_refused_under_the_section(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    combo = named(window, "On a closed day")
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)
    for day in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"):
        click(qtbot, window, f"Weekend: {day}")
    assert len(calendar(window)["weekend"]) == 7
    assert problem_text(window, "Business days") and not window.acts.save.isEnabled()
    undo(window)
    assert problem_text(window, "Business days") == "" and window.acts.save.isEnabled()


def test_the_docs_example_opens_valid_with_the_section_open(window: MainWindow, ctx: AppContext, qtbot: Any) -> None:
    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "invoice-first-business-day.yaml"
    path = ctx.workspace / example.name
    path.write_text(example.read_text(encoding="utf-8"), encoding="utf-8")
    assert window.open_path(path, ask=False)
    assert window.document is not None and window.document.valid
    assert window.designer is not None and window.designer.business_section.is_open
    assert consequence(qtbot, window).startswith("→ On public holidays in US-NY, Saturdays, Sundays and 1 closed date")


def test_a_double_click_on_a_match_adds_it(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    search = named(window, "Public holidays: search")
    search.setFocus()
    qtbot.keyClicks(search, "scotland")
    matches = named(window, "Public holidays: matches")
    assert isinstance(matches, QListWidget) and matches.item(0).text() == "United Kingdom: Scotland (GB-SCT)"
    rect = matches.visualItemRect(matches.item(0))
    # A double-click as the mouse sends it: a press (the item under it is the one pressed), then the second click.
    qtbot.mouseClick(matches.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(matches.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert calendar(window)["holidays"] == ["GB-SCT"]


def test_the_year_view_follows_the_previews_from_until_a_person_turns_the_year(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    view = window.designer.business_days.year_view
    assert view.year == 2027
    window.designer.service.set_start(datetime(2029, 6, 1, tzinfo=UTC))
    assert view.year == 2029
    click(qtbot, window, "Year view: previous year")
    window.designer.service.set_start(datetime(2030, 6, 1, tzinfo=UTC))
    assert view.year == 2028  # the person chose the year shown


def test_ticking_the_calendar_keeps_the_preview_and_says_what_is_missing(shown: MainWindow, qtbot: Any) -> None:
    window = shown
    panel = window.designer.preview
    qtbot.waitUntil(lambda: panel.model.occurrence_count() > 0 and not window.designer.service.pending)
    before = [panel.model.item(r).nominal_local for r in range(3)]
    open_section(qtbot, window)
    click(qtbot, window, "Use a business calendar")
    note = named(window, "Preview without the business calendar")
    qtbot.waitUntil(lambda: note.isVisible() and not window.designer.service.pending, timeout=10_000)
    # The rows are still there (without the calendar), and the line above them says what is missing.
    assert panel.stack.currentWidget() is panel.table
    assert [panel.model.item(r).nominal_local for r in range(3)] == before
    assert note.text().startswith("⚠ Shown without the business calendar until it is complete: holidayPolicy: ")
    assert "choose SKIP, NEXT_BUSINESS_DAY or PREVIOUS_BUSINESS_DAY" in note.text()
    # With a policy chosen, the calendar applies and the line goes.
    policy = named(window, "On a closed day")
    assert isinstance(policy, QComboBox)
    policy.setFocus()
    QTest.keyClick(policy, Qt.Key.Key_Down)
    qtbot.waitUntil(lambda: "holidayPolicy" in window.document.data, timeout=5000)
    qtbot.waitUntil(lambda: not note.isVisible() and not window.designer.service.pending, timeout=10_000)
    assert panel.stack.currentWidget() is panel.table
