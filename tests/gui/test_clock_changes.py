"""The clock changes box: choices write the document, consequence lines come
from the core for this rule and zone, and the box follows the document."""

from __future__ import annotations

import pytest
from conftest import demo_mapping

from scheduler_gui.context import AppContext
from scheduler_gui.designer.clock_changes import ClockChangesBox
from scheduler_gui.document import SpecDocument


@pytest.fixture
def box(document: SpecDocument, ctx: AppContext, qtbot) -> ClockChangesBox:
    widget = ClockChangesBox(document, ctx)
    qtbot.addWidget(widget)
    qtbot.waitUntil(lambda: "Next gap" in widget.gap.line.text(), timeout=5000)
    return widget


def test_new_york_skip_then_next_valid_time(box: ClockChangesBox, document: SpecDocument, qtbot) -> None:
    assert box.gap.buttons["SKIP"].isChecked()
    assert box.gap.line.text() == "→ Next gap: Sun 2027-03-14, 02:30 does not exist; this schedule skips it"
    box.gap.buttons["SHIFT_FORWARD"].click()
    assert document.value("gapPolicy") == "SHIFT_FORWARD"
    qtbot.waitUntil(lambda: "03:00 EDT" in box.gap.line.text(), timeout=5000)
    assert box.gap.line.text().endswith("this schedule will run at 03:00 EDT (07:00 UTC)")
    box.gap.buttons["SHIFT_BY_GAP"].click()
    qtbot.waitUntil(lambda: "03:30 EDT (07:30 UTC)" in box.gap.line.text(), timeout=5000)
    assert document.value("gapPolicy") == "SHIFT_BY_GAP"


def test_other_choices_tell_their_consequence_in_tooltips(box: ClockChangesBox) -> None:
    assert "will run at 03:00 EDT (07:00 UTC)" in box.gap.buttons["SHIFT_FORWARD"].toolTip()
    assert "03:30 EDT" in box.gap.buttons["SHIFT_BY_GAP"].toolTip()
    for group in (box.gap, box.fold, box.invalid_date):
        for button in group.buttons.values():
            assert button.accessibleName().startswith(group.heading.text().replace("<b>", "").replace("</b>", ""))


def test_undo_moves_the_radio_back(box: ClockChangesBox, document: SpecDocument, qtbot) -> None:
    box.fold.buttons["BOTH"].click()
    assert document.value("foldPolicy") == "BOTH"
    document.undo_stack.undo()
    assert box.fold.buttons["FIRST_ONLY"].isChecked()
    assert not box.fold.buttons["BOTH"].isChecked()


def test_a_fold_that_touches_the_schedule(box: ClockChangesBox, document: SpecDocument, qtbot) -> None:
    document.set_value("rule", "FREQ=DAILY;BYHOUR=1;BYMINUTE=30")
    qtbot.waitUntil(lambda: "01:30 happens twice" in box.fold.line.text(), timeout=5000)
    assert box.fold.line.text().endswith("runs once, at 01:30 EDT (05:30 UTC)")
    box.fold.buttons["SECOND_ONLY"].click()
    qtbot.waitUntil(lambda: "01:30 EST (06:30 UTC)" in box.fold.line.text(), timeout=5000)


def test_missing_choice_shows_every_outcome_and_the_problem(
    box: ClockChangesBox, document: SpecDocument, qtbot
) -> None:
    document.set_value("gapPolicy", None)
    assert not any(b.isChecked() for b in box.gap.buttons.values())
    assert box.gap.problem.isVisible() or not box.isVisible()
    assert "no silent default" in box.gap.problem.text()
    qtbot.waitUntil(lambda: "Not chosen yet" in box.gap.line.text(), timeout=5000)
    assert "Next valid time: will run at 03:00 EDT (07:00 UTC)" in box.gap.line.text()
    box.gap.buttons["SKIP"].click()
    assert document.valid
    assert box.gap.problem.text() == ""


def test_zone_without_changes(box: ClockChangesBox, document: SpecDocument, qtbot) -> None:
    document.set_value("timeZone", "America/Phoenix")
    qtbot.waitUntil(lambda: "no clock changes ahead" in box.gap.line.text(), timeout=5000)
    assert box.note.text().startswith("America/Phoenix has no clock changes ahead")


def test_month_end_invoice_missing_date(document: SpecDocument, box: ClockChangesBox, qtbot) -> None:
    document.replace(demo_mapping("invoice-month-end"))
    qtbot.waitUntil(lambda: "Next missing date" in box.invalid_date.line.text(), timeout=5000)
    assert box.invalid_date.buttons["BACKWARD"].isChecked()
    # From 2027-03-01 the next month without a 31st is April (in summer time).
    assert box.invalid_date.line.text().endswith("runs Fri 2027-04-30 18:00 BST (17:00 UTC)")
    box.invalid_date.buttons["FORWARD"].click()
    assert document.value("invalidDatePolicy") == "FORWARD"
    # Moved forward, 2027-02-31 runs on 2027-03-01 at 18:00: still ahead of now (12:00 UTC that day).
    qtbot.waitUntil(lambda: "Mon 2027-03-01 18:00 GMT" in box.invalid_date.line.text(), timeout=5000)
    assert box.invalid_date.line.text() == (
        "→ Next missing date: 2027-02-31 does not exist; runs Mon 2027-03-01 18:00 GMT (18:00 UTC)"
    )


def test_interval_schedules_hide_the_choices(document: SpecDocument, box: ClockChangesBox, qtbot) -> None:
    box.show()
    document.replace(demo_mapping("interval-15min"))
    qtbot.waitUntil(lambda: "elapsed time" in box.note.text(), timeout=5000)
    assert box.note.isVisible()
    assert not box.gap.isVisible() and not box.fold.isVisible() and not box.invalid_date.isVisible()


def test_incomplete_schedule_says_what_to_do(document: SpecDocument, box: ClockChangesBox, qtbot) -> None:
    document.set_value("rule", "FREQ=NEVER")
    qtbot.waitUntil(lambda: "Complete the schedule" in box.gap.line.text(), timeout=5000)


def test_missing_date_choices_fold_away_when_the_rule_cannot_miss(
    box: ClockChangesBox, document: SpecDocument, qtbot
) -> None:
    box.show()
    assert not box.invalid_date.buttons["OMIT"].isVisible()
    assert box.invalid_date.line.text() == "→ This rule only names dates that every month has."
    document.set_value("rule", "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=2;BYMINUTE=30")
    qtbot.waitUntil(lambda: box.invalid_date.buttons["OMIT"].isVisible(), timeout=5000)
    assert box.invalid_date.buttons["OMIT"].isChecked()
    assert box.invalid_date.line.text() == (
        "→ Next missing date: 2027-04-31 does not exist; no run takes its place; "
        "the next run is Mon 2027-05-31 02:30 EDT (06:30 UTC)"
    )


def test_after_completion_speaks_of_its_first_run(document: SpecDocument, box: ClockChangesBox, qtbot) -> None:
    data = dict(document.data)
    del data["rule"]
    document.replace(data | {"kind": "after_completion", "delay": "PT24H", "start": "2027-03-14T02:30:00"})
    first_only = "→ The first run's time is not affected; later runs follow elapsed time."
    qtbot.waitUntil(lambda: box.fold.line.text() == first_only, timeout=5000)
    assert box.gap.line.text() == "→ Next gap: Sun 2027-03-14, 02:30 does not exist; this schedule skips it"
    assert box.invalid_date.isHidden()
