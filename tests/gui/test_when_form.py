"""The "When" box: the calendar form and the RRULE text stay in sync both ways
through the document, with undo, kind switching, ends, exclusions and zones.

The document is the New York 02:30 demo (FREQ=DAILY;BYHOUR=2;BYMINUTE=30).
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from typing_support import problem_text, retype

from core.recurrence.form import RuleForm
from scheduler_gui.designer.when_form import CANNOT_SHOW, WhenForm, kind_switch_changes, split_duration
from scheduler_gui.workspace.document import SpecDocument

DEMO_RULE = "FREQ=DAILY;BYHOUR=2;BYMINUTE=30"


@pytest.fixture
def form(document: SpecDocument, ctx, qtbot) -> WhenForm:
    widget = WhenForm(document, ctx)
    qtbot.addWidget(widget)
    widget.resize(600, widget.sizeHint().height())
    widget.show()
    return widget


def weekday(form: WhenForm, code: str):
    return next(b for b in form.weekday_buttons if b.property("weekday") == code)


def test_shows_the_documents_rule_in_form_and_text(form: WhenForm) -> None:
    assert form.current_form() == RuleForm(freq="DAILY", hours=(2,), minutes=(30,))
    assert form.rule.text() == DEMO_RULE
    assert form.times.text() == "02:30"
    assert form.freq.currentData() == "DAILY"
    assert form.zone.edit.text() == "America/New_York — EST −05:00"
    assert form.zone.summary.text() == "EST −05:00 · DST Mar–Nov"
    assert form.start_hint.text() == "EST −05:00 · 2026-01-01 05:00 UTC"
    assert not form.rule_note.isVisible()


def test_clicking_a_weekday_rewrites_the_rule_and_the_spec(form: WhenForm, document: SpecDocument, qtbot) -> None:
    with qtbot.waitSignal(document.changed):
        qtbot.mouseClick(weekday(form, "MO"), Qt.MouseButton.LeftButton)
    assert document.value("rule") == "FREQ=DAILY;BYDAY=MO;BYHOUR=2;BYMINUTE=30"
    assert document.spec is not None and document.spec.rule == document.value("rule")
    assert form.rule.text() == document.value("rule")
    assert form.current_form() == RuleForm(freq="DAILY", weekdays=("MO",), hours=(2,), minutes=(30,))


def test_undo_and_redo_restore_both_form_and_text(form: WhenForm, document: SpecDocument, qtbot) -> None:
    qtbot.mouseClick(weekday(form, "SA"), Qt.MouseButton.LeftButton)
    qtbot.mouseClick(weekday(form, "SU"), Qt.MouseButton.LeftButton)
    assert form.rule.text() == "FREQ=DAILY;BYDAY=SA,SU;BYHOUR=2;BYMINUTE=30"
    document.undo_stack.undo()
    assert form.rule.text() == "FREQ=DAILY;BYDAY=SA;BYHOUR=2;BYMINUTE=30"
    assert not weekday(form, "SU").isChecked() and weekday(form, "SA").isChecked()
    document.undo_stack.undo()
    assert form.rule.text() == DEMO_RULE and not weekday(form, "SA").isChecked()
    document.undo_stack.redo()
    assert form.rule.text() == "FREQ=DAILY;BYDAY=SA;BYHOUR=2;BYMINUTE=30" and weekday(form, "SA").isChecked()


def test_changing_frequency_fills_the_new_fields_from_start(form: WhenForm, document: SpecDocument) -> None:
    form.freq.setCurrentIndex(form.freq.findData("WEEKLY"))
    form.freq.activated.emit(form.freq.currentIndex())
    # 2026-01-01, the start, is a Thursday.
    assert document.value("rule") == "FREQ=WEEKLY;BYDAY=TH;BYHOUR=2;BYMINUTE=30"
    assert weekday(form, "TH").isChecked()
    form.freq.setCurrentIndex(form.freq.findData("MONTHLY"))
    form.freq.activated.emit(form.freq.currentIndex())
    assert document.value("rule") == "FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=2;BYMINUTE=30"
    assert form.month_days.text() == "1" and not form.cal_form.isRowVisible(form.row_weekdays)


def test_monthly_last_weekday_and_nth_weekday(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.rule, "FREQ=MONTHLY;BYMONTHDAY=15;BYHOUR=9;BYMINUTE=0")
    form.month_mode.setCurrentIndex(form.month_mode.findData("last_weekday"))
    form.month_mode.activated.emit(form.month_mode.currentIndex())
    assert document.value("rule") == "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0;BYSETPOS=-1"
    form.month_mode.setCurrentIndex(form.month_mode.findData("nth_weekday"))
    form.month_mode.activated.emit(form.month_mode.currentIndex())
    form.nth.setCurrentIndex(form.nth.findData(2))
    form.nth_weekday.setCurrentIndex(form.nth_weekday.findData("TU"))
    form.nth.activated.emit(form.nth.currentIndex())
    assert document.value("rule") == "FREQ=MONTHLY;BYDAY=2TU;BYHOUR=9;BYMINUTE=0"
    assert document.valid


def test_typing_times_is_one_undo_step(form: WhenForm, document: SpecDocument, qtbot) -> None:
    before = document.undo_stack.count()
    retype(qtbot, form.times, "02:30, 14:30")
    assert document.value("rule") == "FREQ=DAILY;BYHOUR=2,14;BYMINUTE=30"
    assert problem_text(form, "At") == ""
    assert document.undo_stack.count() == before + 1
    document.undo_stack.undo()
    assert document.value("rule") == DEMO_RULE and form.times.text() == "02:30"


def test_add_another_time_keeps_the_minutes(form: WhenForm, document: SpecDocument, qtbot) -> None:
    qtbot.mouseClick(form.add_time, Qt.MouseButton.LeftButton)
    assert document.value("rule") == "FREQ=DAILY;BYHOUR=2,3;BYMINUTE=30"
    assert form.times.text() == "02:30, 03:30"


def test_times_a_rule_cannot_hold_show_why_and_change_nothing(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.times, "09:15, 17:45")
    assert "would also run at 09:45, 17:15" in problem_text(form, "At")
    # "09:15" was a whole time on the way; the list with 17:45 is not a rule and stays in the field.
    assert document.value("rule") == "FREQ=DAILY;BYHOUR=9;BYMINUTE=15" and document.undo_stack.count() == 1
    assert form.times.text() == "09:15, 17:45"
    assert document.valid and not document.can_save


def test_typing_rule_text_updates_the_form(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.rule, "FREQ=YEARLY;BYMONTH=3;BYDAY=2TU;BYHOUR=9;BYMINUTE=0")
    assert document.value("rule") == "FREQ=YEARLY;BYMONTH=3;BYDAY=2TU;BYHOUR=9;BYMINUTE=0"
    assert form.current_form() == RuleForm(
        freq="YEARLY", months=(3,), month_mode="nth_weekday", nth=2, nth_weekday="TU", hours=(9,), minutes=(0,)
    )
    assert form.nth.currentText() == "second" and form.nth_weekday.currentText() == "Tuesday"
    assert [b.property("month") for b in form.month_buttons if b.isChecked()] == [3]
    assert form.rule.text() == "FREQ=YEARLY;BYMONTH=3;BYDAY=2TU;BYHOUR=9;BYMINUTE=0"  # not rewritten while typing
    assert document.undo_stack.count() == 1


def test_rule_beyond_the_form_disables_it_with_a_note(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.rule, "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO")
    assert document.valid
    assert form.current_form() is None
    assert form.rule_note.isVisible() and form.rule_note.text() == CANNOT_SHOW
    assert not form.interval.isEnabled() and not form.times.isEnabled()
    assert form.rule.isEnabled() and form.start.isEnabled()


def test_invalid_rule_shows_the_cores_message_and_waits(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.rule, "FREQ=DAILY;BYHOUR=25")
    # "FREQ=DAILY;BYHOUR=2" on the way was a whole rule; "…=25" is none and stays in the field only.
    assert document.value("rule") == "FREQ=DAILY;BYHOUR=2" and not document.can_save
    assert "BYHOUR=25 is out of range (hours are 0-23)" in problem_text(form, "RRULE")
    assert form.rule.text() == "FREQ=DAILY;BYHOUR=25" and not form.rule_note.isVisible()
    retype(qtbot, form.rule, DEMO_RULE)
    assert document.can_save and problem_text(form, "RRULE") == "" and form.interval.isEnabled()
    assert document.value("rule") == DEMO_RULE


def test_invalid_rule_in_the_file_shows_the_cores_message(form: WhenForm, document: SpecDocument) -> None:
    document.set_value("rule", "FREQ=DAILY;BYHOUR=25")
    assert not document.valid and document.problems_for("rule")
    assert "BYHOUR=25 is out of range (hours are 0-23)" in problem_text(form, "RRULE")
    assert form.rule.text() == "FREQ=DAILY;BYHOUR=25"
    assert not form.interval.isEnabled() and not form.rule_note.isVisible()


def test_switching_kind_is_one_step_that_removes_and_fills_keys(form: WhenForm, document: SpecDocument) -> None:
    before = document.undo_stack.count()
    form.kind.setCurrentIndex(form.kind.findData("interval"))
    form.kind.activated.emit(form.kind.currentIndex())
    assert document.undo_stack.count() == before + 1
    for gone in ("rule", "start", "gapPolicy", "foldPolicy"):
        assert document.value(gone) is None, gone
    # The anchor is the old start, 2026-01-01 00:00 in New York.
    assert document.value("every") == "PT1H" and document.value("anchor") == "2026-01-01T05:00:00Z"
    assert document.valid, document.problems
    assert form.stack.currentIndex() == 1 and not form.rule.isVisible()
    assert form.anchor_hint.text() == "EST −05:00 · 2026-01-01 05:00 UTC"
    document.undo_stack.undo()
    assert document.value("rule") == DEMO_RULE and document.value("kind") == "calendar"
    assert form.stack.currentIndex() == 0 and form.rule.text() == DEMO_RULE


def test_switch_to_after_completion_keeps_start(form: WhenForm, document: SpecDocument) -> None:
    form.kind.setCurrentIndex(form.kind.findData("after_completion"))
    form.kind.activated.emit(form.kind.currentIndex())
    assert document.value("delay") == "PT24H" and document.value("start") == "2026-01-01T00:00:00"
    assert document.value("rule") is None and document.valid, document.problems
    assert (form.delay.number.value(), form.delay.unit.currentData()) == (1, "days")
    form.delay.unit.setCurrentIndex(form.delay.unit.findData("hours"))
    form.delay.unit.activated.emit(form.delay.unit.currentIndex())
    form.delay.number.setValue(12)
    assert document.value("delay") == "PT12H"


def test_interval_every_and_anchor_write_the_document(document: SpecDocument, ctx, qtbot) -> None:
    document.replace({**document.data, **kind_switch_changes(document.data, "interval", ctx.clock.now())})
    form = WhenForm(document, ctx)
    qtbot.addWidget(form)
    retype(qtbot, form.every.number, "15")
    form.every.unit.setCurrentIndex(form.every.unit.findData("minutes"))
    form.every.unit.activated.emit(form.every.unit.currentIndex())
    assert document.value("every") == "PT15M"
    retype(qtbot, form.anchor.edit, "2026-01-01 09:00")
    assert document.value("anchor") == "2026-01-01T14:00:00Z"


@pytest.mark.parametrize(
    ("choice", "rule", "end"),
    [
        pytest.param("count", DEMO_RULE + ";COUNT=10", None, id="after_10"),
        pytest.param("date", DEMO_RULE, "2027-01-01", id="on_a_date"),
    ],
)
def test_ends_after_count_or_on_date(form: WhenForm, document: SpecDocument, qtbot, choice, rule, end) -> None:
    button = form.end_count_radio if choice == "count" else form.end_date_radio
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert document.value("rule") == "FREQ=DAILY;COUNT=10;BYHOUR=2;BYMINUTE=30" if choice == "count" else rule
    assert document.value("end") == end
    qtbot.mouseClick(form.end_never, Qt.MouseButton.LeftButton)
    assert document.value("rule") == DEMO_RULE and document.value("end") is None


def test_end_count_and_date_edits(form: WhenForm, document: SpecDocument, qtbot) -> None:
    qtbot.mouseClick(form.end_count_radio, Qt.MouseButton.LeftButton)
    retype(qtbot, form.end_count, "5")
    assert document.value("rule") == "FREQ=DAILY;COUNT=5;BYHOUR=2;BYMINUTE=30"
    qtbot.mouseClick(form.end_date_radio, Qt.MouseButton.LeftButton)
    retype(qtbot, form.end_date.edit, "2026-06-30")
    assert document.value("end") == "2026-06-30" and document.value("rule") == DEMO_RULE


def test_until_in_the_rule_shows_as_an_end_date(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.rule, DEMO_RULE + ";UNTIL=20261231T235959")
    assert form.end_date_radio.isChecked() and form.end_date.edit.text() == "2026-12-31"
    assert "UNTIL" in form.end_hint.text()
    retype(qtbot, form.end_date.edit, "2026-11-30")
    assert document.value("rule") == DEMO_RULE and document.value("end") == "2026-11-30"


def test_exclusions_are_written_and_bad_dates_are_refused(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.exclude, "2026-12-25, 2027-01-01")
    assert document.value("exclude") == ["2026-12-25", "2027-01-01"]
    retype(qtbot, form.exclude, "2026-13-01")
    assert "2026-13-01" in problem_text(form, "Except")
    assert document.value("exclude") == ["2026-12-25", "2027-01-01"] and not document.can_save


def test_start_edit_writes_local_wall_time(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.start.edit, "2027-03-14 02:30")
    assert document.value("start") == "2027-03-14T02:30:00"
    assert form.start_hint.text() == "does not exist in America/New_York (clocks jump forward)"


def test_zone_choice_writes_the_document(form: WhenForm, document: SpecDocument) -> None:
    assert form.zone.search("mexico city")[0] == "America/Mexico_City"
    form.zone.choose("America/Mexico_City")
    assert document.value("timeZone") == "America/Mexico_City"
    assert form.zone.note.message().startswith("no DST since 2022")
    document.undo_stack.undo()
    assert form.zone.zone() == "America/New_York" and form.zone.note.message() == ""


def test_bad_zone_in_the_file_is_shown_with_its_message(form: WhenForm, document: SpecDocument) -> None:
    document.set_value("timeZone", "EST")
    assert "abbreviation" in form.error_text("timeZone")
    assert form.zone.edit.text() == "EST"


def test_hourly_minutes_and_hours(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.rule, "FREQ=HOURLY;BYMINUTE=15")
    retype(qtbot, form.minutes, "0, 30")
    assert document.value("rule") == "FREQ=HOURLY;BYMINUTE=0,30"
    retype(qtbot, form.hours, "9-17")
    assert document.value("rule") == "FREQ=HOURLY;BYHOUR=9,10,11,12,13,14,15,16,17;BYMINUTE=0,30"
    retype(qtbot, form.hours, "25")
    assert "out of range" in problem_text(form, "Hours")


def test_new_schedule_without_a_zone_gets_the_workspaces(ctx, qtbot) -> None:
    ctx.machine_zone = lambda: "Europe/Oslo"
    document = SpecDocument({"schema": "scheduleSpec.v1", "scheduleId": "new", "revision": 1})
    form = WhenForm(document, ctx)
    qtbot.addWidget(form)
    qtbot.waitUntil(lambda: document.value("timeZone") == "Europe/Oslo")
    assert form.zone.zone() == "Europe/Oslo"


def test_fits_beside_the_clock_changes_box(form: WhenForm, tmp_path) -> None:
    hint = form.sizeHint()
    assert hint.width() <= 620 and hint.height() <= 420
    image = form.grab()
    assert not image.isNull()
    assert image.save(str(tmp_path / "when.png"))


def test_interval_back_to_calendar_takes_the_anchors_wall_time(document: SpecDocument, ctx, qtbot) -> None:
    data = {**document.data, **kind_switch_changes(document.data, "interval", ctx.clock.now())}
    data = {k: v for k, v in data.items() if v is not None}
    data["anchor"] = "2026-06-01T13:45:00Z"
    document.replace(data)
    form = WhenForm(document, ctx)
    qtbot.addWidget(form)
    form.kind.setCurrentIndex(form.kind.findData("calendar"))
    form.kind.activated.emit(form.kind.currentIndex())
    # 13:45 UTC is 09:45 EDT in New York.
    assert document.value("rule") == "FREQ=DAILY;BYHOUR=9;BYMINUTE=45"
    assert document.value("start") == "2026-06-01T00:00:00"
    assert (document.value("gapPolicy"), document.value("foldPolicy")) == ("SHIFT_FORWARD", "FIRST_ONLY")
    assert document.value("every") is None and document.value("anchor") is None
    assert document.valid, document.problems
    assert form.times.text() == "09:45" and form.freq.currentText() == "day"


def test_every_control_is_named_explained_and_reachable(form: WhenForm) -> None:
    from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox, QLineEdit

    controls = [
        w
        for w in form.findChildren(QWidget)
        if isinstance(w, (QAbstractButton, QAbstractSpinBox, QComboBox, QLineEdit))
        and not isinstance(w.parentWidget(), (QAbstractSpinBox, QComboBox))
    ]
    assert len(controls) > 30
    for widget in controls:
        assert widget.accessibleName(), widget
        assert widget.toolTip(), widget.accessibleName()
        assert widget.focusPolicy() & Qt.FocusPolicy.TabFocus, widget.accessibleName()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("PT15M", (15, "minutes"), id="minutes"),
        pytest.param("PT24H", (1, "days"), id="a_day"),
        pytest.param("PT90M", (90, "minutes"), id="ninety_minutes"),
        pytest.param("PT2H", (2, "hours"), id="hours"),
        pytest.param("PT45S", (45, "seconds"), id="seconds"),
        pytest.param("junk", (1, "hours"), id="unreadable"),
    ],
)
def test_split_duration(text: str, expected: tuple[int, str]) -> None:
    assert split_duration(text) == expected


def test_picking_a_date_to_skip_adds_it_once(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.exclude_day.edit, "2027-12-25")
    qtbot.mouseClick(form.exclude_add, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(form.exclude_add, Qt.MouseButton.LeftButton)
    assert document.value("exclude") == ["2027-12-25"]
    assert form.exclude.text() == "2027-12-25"
    assert document.undo_stack.count() == 1


# --- typed fields: nothing half-typed reaches the schedule -----------------------------------------


def test_leaving_a_field_keeps_its_text_and_its_message(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.times, "25:6")
    qtbot.keyClick(form.times, Qt.Key.Key_Tab)
    assert not form.times.hasFocus()
    assert form.times.text() == "25:6" and "'25:6' is not a time of day" in problem_text(form, "At")
    assert document.value("rule") == DEMO_RULE and not document.can_save


def test_escape_gives_the_documents_value_back(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.times, "25:6")
    qtbot.keyClick(form.times, Qt.Key.Key_Escape)
    assert form.times.text() == "02:30" and problem_text(form, "At") == ""
    assert document.can_save and document.undo_stack.count() == 0


def test_undo_and_redo_show_the_document_again(form: WhenForm, document: SpecDocument, qtbot) -> None:
    qtbot.mouseClick(weekday(form, "MO"), Qt.MouseButton.LeftButton)
    retype(qtbot, form.times, "25:6")
    retype(qtbot, form.start.edit, "2027-02-3")
    assert len(document.field_problems) == 2
    document.undo_stack.undo()
    assert not weekday(form, "MO").isChecked()
    assert form.times.text() == "02:30" and form.start.edit.text() == "2026-01-01 00:00"
    assert problem_text(form, "At") == "" and problem_text(form, "Starts") == ""
    assert document.can_save
    retype(qtbot, form.times, "7")
    document.undo_stack.redo()
    assert weekday(form, "MO").isChecked() and form.times.text() == "02:30" and document.can_save


def test_loading_a_file_shows_its_values_again(form: WhenForm, document: SpecDocument, qtbot, tmp_path) -> None:
    retype(qtbot, form.times, "25:6")
    copy = tmp_path / "copy.yaml"
    document.save(copy)
    document.load(copy)
    assert form.times.text() == "02:30" and problem_text(form, "At") == "" and document.can_save


def test_another_field_moving_the_value_replaces_the_unfinished_text(
    form: WhenForm, document: SpecDocument, qtbot
) -> None:
    retype(qtbot, form.times, "25:6")
    qtbot.mouseClick(weekday(form, "TU"), Qt.MouseButton.LeftButton)  # the times stay: the text too
    assert form.times.text() == "25:6" and not document.can_save
    retype(qtbot, form.rule, "FREQ=DAILY;BYDAY=TU;BYHOUR=4;BYMINUTE=0")  # the times move: the field follows
    assert form.times.text() == "04:00" and problem_text(form, "At") == "" and document.can_save


def test_a_zero_interval_says_so_instead_of_jumping_back(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.interval, "0")
    qtbot.keyClick(form.interval, Qt.Key.Key_Tab)  # Qt's own spin box would put 1 back here
    assert form.interval.text() == "every 0"
    assert problem_text(form, "Repeats") == "the repeat interval must be at least 1"
    assert document.value("rule") == DEMO_RULE and not document.can_save
    form.interval.setFocus()
    qtbot.keyClick(form.interval, Qt.Key.Key_Up)
    assert form.interval.value() == 1 and document.can_save and problem_text(form, "Repeats") == ""
    qtbot.keyClick(form.interval, Qt.Key.Key_Down)  # the arrows stop at the smallest value allowed
    assert form.interval.value() == 1 and document.undo_stack.count() == 0


def test_an_emptied_count_asks_for_a_number(form: WhenForm, document: SpecDocument, qtbot) -> None:
    form.interval.setFocus()
    form.interval.selectAll()
    qtbot.keyClick(form.interval, Qt.Key.Key_Backspace)
    assert problem_text(form, "Repeats") == "give the repeat interval: a whole number of at least 1"
    assert not document.can_save


def test_a_hidden_field_does_not_hold_the_schedule_back(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.times, "25:6")
    form.freq.setCurrentIndex(form.freq.findData("HOURLY"))
    form.freq.activated.emit(form.freq.currentIndex())
    assert not form.cal_form.isRowVisible(form.row_times)
    assert document.value("rule") == "FREQ=HOURLY;BYMINUTE=30" and document.can_save
    form.kind.setCurrentIndex(form.kind.findData("interval"))
    form.kind.activated.emit(form.kind.currentIndex())
    retype(qtbot, form.anchor.edit, "2027-02-30")
    assert not document.can_save
    form.kind.setCurrentIndex(form.kind.findData("calendar"))
    form.kind.activated.emit(form.kind.currentIndex())
    assert document.can_save, document.field_problems


def test_the_last_weekday_cannot_be_unticked_silently(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.rule, "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0")
    steps = document.undo_stack.count()
    qtbot.mouseClick(weekday(form, "MO"), Qt.MouseButton.LeftButton)
    assert problem_text(form, "Weekdays") == "choose at least one weekday"
    assert document.value("rule") == "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0" and not document.can_save
    qtbot.mouseClick(weekday(form, "WE"), Qt.MouseButton.LeftButton)
    assert document.value("rule") == "FREQ=WEEKLY;BYDAY=WE;BYHOUR=9;BYMINUTE=0"
    assert document.undo_stack.count() == steps + 1 and document.can_save


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("2027-02-3", "'2027-02-3' is not a date and time yet", id="half_a_day"),
        pytest.param("2027-02-03", "'2027-02-03' is not a date and time yet", id="no_time"),
        pytest.param("2027-02-03 9:0", "'2027-02-03 9:0' is not a date and time yet", id="half_a_minute"),
        pytest.param("2027-02-29 09:00", "February 2027 has 28 days", id="not_a_leap_year"),
        pytest.param("2027-04-31 09:00", "April 2027 has 30 days", id="april_31"),
        pytest.param("2027-04-30 24:00", "hours are 0 to 23", id="hour_24"),
    ],
)
def test_a_start_that_is_not_a_date_and_time(form: WhenForm, document: SpecDocument, qtbot, text, message) -> None:
    retype(qtbot, form.start.edit, text)
    assert message in problem_text(form, "Starts")
    assert document.value("start") == "2026-01-01T00:00:00" and document.undo_stack.count() == 0


def test_a_leap_day_and_a_single_digit_hour_are_dates_and_times(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.start.edit, "2028-02-29 9:05")
    assert document.value("start") == "2028-02-29T09:05:00" and document.undo_stack.count() == 1


def test_picking_the_start_day_keeps_the_time(form: WhenForm, document: SpecDocument, qtbot) -> None:
    qtbot.mouseClick(form.start.pick, Qt.MouseButton.LeftButton)
    calendar = form.start.calendar
    assert calendar is not None and calendar.selectedDate().toString("yyyy-MM-dd") == "2026-01-01"
    calendar.setSelectedDate(calendar.selectedDate().addDays(13))
    calendar.activated.emit(calendar.selectedDate())
    assert document.value("start") == "2026-01-14T00:00:00" and document.undo_stack.count() == 1
    assert form.start.edit.text() == "2026-01-14 00:00"


def test_a_date_to_skip_that_is_no_date_cannot_be_added(form: WhenForm, document: SpecDocument, qtbot) -> None:
    retype(qtbot, form.exclude_day.edit, "2027-12-3")
    assert not form.exclude_add.isEnabled()
    assert "'2027-12-3' is not a date yet" in problem_text(form, "Except (date to skip)")
    assert document.can_save  # nothing of the schedule is waiting
    qtbot.keyClicks(form.exclude_day.edit, "1")
    assert form.exclude_add.isEnabled() and problem_text(form, "Except (date to skip)") == ""
