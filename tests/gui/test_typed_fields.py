"""Typed fields never commit a half-typed value.

Every field a person types into is driven key by key in the main window:
while its text is not a value, the document (its data and its undo stack)
does not change, the message sits on the line under that field, Save and
Publish are disabled and the status bar names the problem; once the text is
fixed, the value reaches the document as one undo step.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QWidget
from shell_fixtures import window_fixture  # noqa: F401
from typing_support import named, problem_line, problem_text, retype

from scheduler_gui.main_window import MainWindow
from scheduler_gui.monitor.states import HubState
from scheduler_gui.workspace.document import get_path

BLOCKED = "Cannot save while the schedule has a problem: "


# --- what a person does before typing ---------------------------------------------------------


def click(name: str) -> Callable[[MainWindow, object], None]:
    def setup(window: MainWindow, qtbot) -> None:
        qtbot.mouseClick(named(window.designer, name), Qt.MouseButton.LeftButton)

    return setup


def open_section(which: str) -> Callable[[MainWindow, object], None]:
    def setup(window: MainWindow, qtbot) -> None:
        section = window.designer.task_section if which == "task" else window.designer.recovery_section
        qtbot.mouseClick(section.button, Qt.MouseButton.LeftButton)
        assert section.is_open

    return setup


def make_after_completion(window: MainWindow, qtbot) -> None:
    kind = named(window.designer, "Kind")
    kind.setFocus()
    kind.setCurrentIndex(kind.findData("after_completion"))
    kind.activated.emit(kind.currentIndex())
    assert window.document.value("kind") == "after_completion"


@dataclass(frozen=True)
class Case:
    file: str
    name: str  # the field's accessible name
    bad: str  # typed key by key: no prefix of it is a value
    message: str  # in the line under the field and in the status bar
    good: str
    path: str
    value: object
    line: str = ""  # the field whose line it is, when not ``name``
    setup: Callable[[MainWindow, object], None] | None = field(default=None, compare=False)


DAILY = "daily-ops-summary.yaml"  # FREQ=DAILY;BYHOUR=2;BYMINUTE=30 in New York
HOURLY = "hourly-fallback.yaml"  # FREQ=HOURLY;BYMINUTE=15
MONTHLY = "invoice-month-end.yaml"  # FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=18;BYMINUTE=0
INTERVAL = "interval-15min.yaml"  # every PT15M in Chicago

CASES = [
    pytest.param(
        Case(DAILY, "At", "25:61", "'25:61' is not a time of day", "23:45", "rule",
             "FREQ=DAILY;BYHOUR=23;BYMINUTE=45"),
        id="at",
    ),
    pytest.param(
        Case(DAILY, "Repeats: how many", "0", "the repeat interval must be at least 1", "3", "rule",
             "FREQ=DAILY;INTERVAL=3;BYHOUR=2;BYMINUTE=30", line="Repeats"),
        id="repeat_every",
    ),
    pytest.param(
        Case(DAILY, "Starts", "2027-02-30 02:30", "February 2027 has 28 days", "2027-03-14 02:30", "start",
             "2027-03-14T02:30:00"),
        id="start",
    ),
    pytest.param(
        Case(MONTHLY, "Day: numbers", "0", "'0' is out of range; days of the month are 1 to 31", "15", "rule",
             "FREQ=MONTHLY;BYMONTHDAY=15;BYHOUR=18;BYMINUTE=0", line="Day"),
        id="days_of_month",
    ),
    pytest.param(
        Case(HOURLY, "At (minutes past the hour)", "-5", "'-5' is not a number", "45", "rule",
             "FREQ=HOURLY;BYMINUTE=45"),
        id="minutes",
    ),
    pytest.param(
        Case(HOURLY, "Hours", "-1", "'-1' is not a number", "9-17", "rule",
             "FREQ=HOURLY;BYHOUR=9,10,11,12,13,14,15,16,17;BYMINUTE=15"),
        id="hours",
    ),
    pytest.param(
        Case(DAILY, "Ends after", "0", "the number of occurrences must be at least 1", "5", "rule",
             "FREQ=DAILY;COUNT=5;BYHOUR=2;BYMINUTE=30", setup=click("Ends after a number of runs")),
        id="end_count",
    ),
    pytest.param(
        Case(DAILY, "Ends on", "2027-02-30", "February 2027 has 28 days", "2027-06-30", "end", "2027-06-30",
             setup=click("Ends on a date")),
        id="end_date",
    ),
    pytest.param(
        Case(DAILY, "Except", "2026-12-32", "'2026-12-32' is not a real date", "2026-12-25", "exclude",
             ["2026-12-25"]),
        id="exclusions",
    ),
    pytest.param(
        Case(DAILY, "RRULE", "FREQ=SOMETIMES", "FREQ=SOMETIMES is not one of",
             "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0", "rule", "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0"),
        id="rrule",
    ),
    pytest.param(
        Case(INTERVAL, "Every: how many", "0", "the interval must be at least 1", "20", "every", "PT20M",
             line="Every"),
        id="every",
    ),
    pytest.param(
        Case(INTERVAL, "From (anchor)", "2027-02-30 09:00", "February 2027 has 28 days", "2027-03-01 09:00", "anchor",
             "2027-03-01T15:00:00Z"),
        id="anchor",
    ),
    pytest.param(
        Case(DAILY, "Delay: how many", "0", "the delay must be at least 1", "12", "delay", "P12D", line="Delay",
             setup=make_after_completion),
        id="delay",
    ),
    pytest.param(
        Case(DAILY, "First run", "2027-13-01 09:00", "months are 01 to 12", "2027-03-02 09:00", "start",
             "2027-03-02T09:00:00", setup=make_after_completion),
        id="first_run",
    ),
    pytest.param(
        Case(DAILY, "Missed when late by", "PT1.5S", "'PT1.5S' is not a whole number of seconds", "20 min",
             "latenessWindow", "PT20M", setup=open_section("recovery")),
        id="lateness",
    ),
    pytest.param(
        Case(DAILY, "Never run if older than", "abc", "'abc' is not a length of time", "1 day", "catchUpWindow", "P1D",
             setup=open_section("recovery")),
        id="catch_up_window",
    ),
    pytest.param(
        Case(DAILY, "First wait", "15", "'15' is not a length of time", "45 s", "retry.initialBackoff", "PT45S",
             setup=open_section("recovery")),
        id="first_wait",
    ),
    pytest.param(
        Case(DAILY, "Longest wait", "P1M", "uses years or months", "PT5M", "retry.maxBackoff", "PT5M",
             setup=open_section("recovery")),
        id="longest_wait",
    ),
    pytest.param(
        Case(DAILY, "Start up to", "soon", "'soon' is not a length of time", "PT5M", "jitter", "PT5M",
             setup=open_section("recovery")),
        id="jitter",
    ),
    pytest.param(
        Case(DAILY, "Newest (how many missed runs to make up)", "0", "must be at least 1", "3", "maxCatchUp", 3,
             setup=open_section("recovery")),
        id="max_catch_up",
    ),
    pytest.param(
        Case(DAILY, "Attempts at most", "0", "the number of attempts must be at least 1", "4", "retry.maxAttempts",
             4, setup=open_section("recovery")),
        id="max_attempts",
    ),
    pytest.param(
        Case(DAILY, "Each wait ×", "0.5", "the wait multiplier must be at least 1", "1.5", "retry.multiplier",
             1.5, setup=open_section("recovery")),
        id="multiplier",
    ),
    pytest.param(
        Case(DAILY, "Stop after", "1.5 s", "'1.5 s' is not a whole number of seconds", "2 min", "task.timeout",
             "PT2M", setup=open_section("task")),
        id="timeout",
    ),
]  # fmt: skip


@pytest.fixture
def shown(window: MainWindow, monkeypatch: pytest.MonkeyPatch, qtbot) -> MainWindow:
    # Publishing also needs an open ledger; standing in for one leaves the document as its only condition.
    monkeypatch.setattr(window.hub, "state", HubState.OPEN)
    window.resize(1280, 800)
    window.show()
    window.activateWindow()
    qtbot.waitActive(window)
    return window


def open_file(window: MainWindow, name: str) -> None:
    assert window.open_path(window.ctx.workspace / name, ask=False)
    window._update_save()  # the stand-in ledger above came after the window's first look


def below(line: QWidget, edit: QWidget, root: QWidget) -> bool:
    """The line sits under the field, within a couple of rows."""
    field_bottom = edit.mapTo(root, QPoint(0, edit.height())).y()
    line_top = line.mapTo(root, QPoint(0, 0)).y()
    return 0 <= line_top - field_bottom <= 2 * edit.height()


@pytest.mark.parametrize("case", CASES)
def test_a_half_typed_value_never_reaches_the_document(shown: MainWindow, qtbot, case: Case) -> None:
    window = shown
    open_file(window, case.file)
    if case.setup is not None:
        case.setup(window, qtbot)
    doc = window.document
    root = window.designer
    edit = named(root, case.name)
    line_name = case.line or case.name
    assert doc.can_save and window.acts.save.isEnabled() and window.acts.publish.isEnabled()
    before, steps = copy.deepcopy(doc.data), doc.undo_stack.count()

    edit.setFocus()
    edit.selectAll()
    for key in case.bad:
        qtbot.keyClicks(edit, key)
        assert doc.data == before, f"{edit.text()!r} reached the document"
        assert doc.undo_stack.count() == steps
        shown_problem = problem_text(root, line_name)
        assert shown_problem, f"no message under {line_name} for {edit.text()!r}"
        assert not window.acts.save.isEnabled() and not window.acts.publish.isEnabled()
        assert shown_problem.removeprefix("⚠ ") in window.statusBar().currentMessage()
        assert window.statusBar().currentMessage().startswith(BLOCKED)
        assert shown_problem.removeprefix("⚠ ") in window.acts.save.toolTip()
    assert case.message in problem_text(root, line_name)
    qtbot.waitUntil(lambda: below(problem_line(root, line_name), edit, root), timeout=2000)

    retype(qtbot, edit, case.good)
    assert get_path(doc.data, case.path) == case.value
    assert doc.undo_stack.count() == steps + 1, "the fixed value is one undo step"
    assert problem_text(root, line_name) == ""
    assert window.acts.save.isEnabled() and window.acts.publish.isEnabled()
    assert not window.statusBar().currentMessage().startswith(BLOCKED)
    doc.undo_stack.undo()
    assert doc.data == before


def test_the_reason_shown_is_always_the_current_first_problem(shown: MainWindow, qtbot) -> None:
    window = shown
    open_file(window, DAILY)
    root = window.designer
    times, start = named(root, "At"), named(root, "Starts")
    retype(qtbot, times, "25:61")
    assert window.statusBar().currentMessage() == BLOCKED + "rule: '25:61' is not a time of day like 02:30 or 14:05"
    retype(qtbot, times, "03:30")
    assert window.statusBar().currentMessage() == ""
    assert window.acts.save.toolTip() == "Save the schedule (Ctrl+S)"
    retype(qtbot, start, "2027-02-30 02:30")
    expected = BLOCKED + "start: '2027-02-30 02:30' is not a date: February 2027 has 28 days"
    assert window.statusBar().currentMessage() == expected
    assert window.acts.save.toolTip() == expected
    # A second problem does not take the first one's place; fixing the first shows the second.
    retype(qtbot, named(root, "RRULE"), "FREQ=")
    assert window.statusBar().currentMessage() == expected
    retype(qtbot, start, "2027-03-01 00:00")
    assert window.statusBar().currentMessage() == BLOCKED + "rule: FREQ has no value"
    assert "FREQ has no value" in window.acts.save.toolTip()
    # A problem of the spec itself (not of a field's text) is shown the same way once the fields are fixed.
    retype(qtbot, named(root, "RRULE"), "FREQ=DAILY;BYHOUR=2;BYMINUTE=30")
    window.document.set_value("timeZone", "EST")
    assert window.statusBar().currentMessage().startswith(BLOCKED + "timeZone:")
    window.document.undo_stack.undo()
    assert window.statusBar().currentMessage() == "" and window.acts.save.isEnabled()
