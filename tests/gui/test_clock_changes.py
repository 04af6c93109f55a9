"""The clock changes box: choices write the document, consequence lines come
from the core for this rule and zone, and the box follows the document; the
rows a line names are rows of the preview table, seen from the same instant."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from consequence_support import click, open_designer, settle, table_rows, widget_named
from gui_support import demo_mapping
from PySide6.QtCore import Qt

from core.clock import FixedClock
from scheduler_gui.context import AppContext
from scheduler_gui.designer.clock_changes import ClockChangesBox
from scheduler_gui.workspace.document import SpecDocument


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


# --- the lines and the preview table tell the same rows ---------------------------------------

MONTH_END = "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=9;BYMINUTE=0"


@pytest.mark.parametrize(
    ("overrides", "now", "title", "choice", "line"),
    [
        pytest.param(
            {},
            "2027-03-01T12:00:00Z",
            "Missing time (clocks jump forward)",
            "Next valid time",
            "Next gap: Sun 2027-03-14, 02:30 does not exist; this schedule will run at 03:00 EDT (07:00 UTC)",
            id="gap_next_valid_time",
        ),
        pytest.param(
            {},
            "2027-03-01T12:00:00Z",
            "Missing time (clocks jump forward)",
            "Shift by the gap",
            "Next gap: Sun 2027-03-14, 02:30 does not exist; this schedule will run at 03:30 EDT (07:30 UTC)",
            id="gap_shift_by_the_gap",
        ),
        pytest.param(
            {"rule": "FREQ=DAILY;BYHOUR=1;BYMINUTE=30"},
            "2026-10-01T00:00:00Z",
            "Repeated time (clocks fall back)",
            "Both",
            # The demo keeps one run per day (businessPeriod), so the second reading is a duplicate.
            "Next repeat: Sun 2026-11-01, 01:30 happens twice; runs once, at 01:30 EDT (05:30 UTC); "
            "the other reading is dropped as a duplicate",
            id="fold_both",
        ),
        pytest.param(
            {"rule": "FREQ=DAILY;BYHOUR=1;BYMINUTE=30"},
            "2026-10-01T00:00:00Z",
            "Repeated time (clocks fall back)",
            "Second only",
            "Next repeat: Sun 2026-11-01, 01:30 happens twice; runs once, at 01:30 EST (06:30 UTC)",
            id="fold_second_only",
        ),
        pytest.param(
            {"rule": MONTH_END},
            # 2026-11-30 after 09:00 EST: that day's run is past.
            "2026-11-30T15:00:00Z",
            "Missing date (day 31 in a 30-day month)",
            "Last valid day",
            "Next missing date: 2027-02-31 does not exist; runs Sun 2027-02-28 09:00 EST (14:00 UTC)",
            id="missing_date_last_valid_day",
        ),
        pytest.param(
            {"rule": MONTH_END},
            "2026-11-30T15:00:00Z",
            "Missing date (day 31 in a 30-day month)",
            "First day of next month",
            "Next missing date: 2026-11-31 does not exist; runs Tue 2026-12-01 09:00 EST (14:00 UTC)",
            id="missing_date_first_day_of_next_month",
        ),
        pytest.param(
            {"rule": MONTH_END, "invalidDatePolicy": "FORWARD"},
            "2026-11-30T15:00:00Z",
            "Missing date (day 31 in a 30-day month)",
            "Omit",
            "Next missing date: 2026-11-31 does not exist; no run takes its place; "
            "the next run is Thu 2026-12-31 09:00 EST (14:00 UTC)",
            id="missing_date_omit",
        ),
    ],
)
def test_a_clicked_choice_names_a_row_of_the_preview_table(
    document: SpecDocument,
    clock: FixedClock,
    ctx: AppContext,
    qtbot,
    overrides: dict[str, str],
    now: str,
    title: str,
    choice: str,
    line: str,
) -> None:
    clock.set(datetime.fromisoformat(now))
    document.replace(dict(document.data) | overrides)
    with open_designer(document, ctx, qtbot) as page:
        button = widget_named(page, f"{title}: {choice}")
        click(button)
        assert button.isChecked()
        settle(page, qtbot)
        group = next(
            g
            for g in (page.clock_changes.gap, page.clock_changes.fold, page.clock_changes.invalid_date)
            if g.buttons.get(document.value(g.key, g.default)) is button
        )
        assert group.line.text() == f"→ {line}"
        # The line's rows are the table's own rows, field for field, from the same instant.
        assert group.part is not None and group.part.outcome is not None
        outcome = group.part.outcome
        named = [*outcome.rows, *([outcome.following] if outcome.following is not None else [])]
        shown = table_rows(page)
        assert named and all(row in shown for row in named)
        assert all(row.position >= page.service.start for row in named)
        assert page.service.start == clock.now()
        # Its date is in the line; the summary's sentence for this policy names the same rows' dates.
        day = named[0].nominal.date().isoformat()
        assert day in line
        key = group.key
        sentence = next(s for s in page.summary.summary.lines if f"({key} " in s)
        dates = set(re.findall(r"\d{4}-\d{2}-\d{2}", sentence))
        assert dates <= {r.nominal.date().isoformat() for r in named} | {outcome.missing} | {
            page.clock_changes.latest.gap.transition.local_before.date().isoformat()
        }


def test_the_lines_are_seen_from_the_preview_from(document: SpecDocument, ctx: AppContext, qtbot) -> None:
    with open_designer(document, ctx, qtbot) as page:
        gap = page.clock_changes.gap
        assert gap.line.text() == "→ Next gap: Sun 2027-03-14, 02:30 does not exist; this schedule skips it"
        # The preview from 1 November 2027: the next gap its rows meet is 2028's, and the lines say so.
        page.preview.set_start_time(datetime(2027, 11, 1, tzinfo=UTC))
        qtbot.waitUntil(lambda: "2028-03-12" in gap.line.text(), timeout=10_000)
        settle(page, qtbot)
        assert gap.line.text() == "→ Next gap: Sun 2028-03-12, 02:30 does not exist; this schedule skips it"
        assert gap.part is not None and gap.part.outcome is not None
        # The rows reach the next clock change (2027-11-07); F6 goes there, then on to the gap the line names.
        table = page.preview.table
        table.setFocus()
        qtbot.keyClick(table, Qt.Key.Key_F6)  # the button's shortcut: it clicks a moment later
        qtbot.waitUntil(lambda: page.preview.model.is_separator(table.currentIndex().row()), timeout=5000)
        with qtbot.waitSignal(page.service.ready, timeout=10_000):
            qtbot.keyClick(table, Qt.Key.Key_F6)
        assert all(row in table_rows(page) for row in gap.part.outcome.rows)
        assert "Next gap: Sun 2028-03-12" in page.summary.plain_text()
        # Back to now.
        page.preview.from_choice.setCurrentIndex(0)
        qtbot.waitUntil(lambda: "2027-03-14" in gap.line.text(), timeout=10_000)
