"""The zone picker: typing lists zones by name, city, country or abbreviation;
Enter takes only an exact or the only match and otherwise keeps the list open;
leaving the field with something that is not a zone puts the zone back and
says so; the summary and rule-change note follow the zone, and programmatic
changes stay silent.

Keys go where a person's would: to the list while it is open (the completer
hands what it does not use to the field), else to the field."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QWidget

from scheduler_gui.designer.when_form import WhenForm
from scheduler_gui.designer.zone_picker import NAME_ROLE, SEVERAL, ZonePicker
from scheduler_gui.workspace.document import SpecDocument


@pytest.fixture
def picker(clock, qtbot) -> ZonePicker:
    widget = ZonePicker(clock)
    qtbot.addWidget(widget)
    widget.set_zone("UTC")
    widget.resize(420, widget.sizeHint().height())
    widget.show()
    widget.activateWindow()
    qtbot.waitActive(widget)
    return widget


@pytest.fixture
def form(document: SpecDocument, ctx, qtbot) -> WhenForm:
    widget = WhenForm(document, ctx)
    qtbot.addWidget(widget)
    widget.resize(600, widget.sizeHint().height())
    widget.show()
    widget.activateWindow()
    qtbot.waitActive(widget)
    return widget


def zone_field(root: QWidget) -> QLineEdit:
    """The "When" box's zone field, found as a person (or a screen reader) finds it: by its name,
    the label of its row."""
    return next(w for w in root.findChildren(QLineEdit) if w.accessibleName() == "Zone")


def type_in(qtbot, edit: QLineEdit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)


def press(qtbot, edit: QLineEdit, key: Qt.Key) -> None:
    """A key press as the person makes it: the open list gets it first."""
    qtbot.keyClick(QApplication.activePopupWidget() or edit, key)


def test_model_passes_the_model_tester(picker: ZonePicker, qtbot, qtmodeltester) -> None:
    qtmodeltester.check(picker.model)
    picker.search("europe")
    qtmodeltester.check(picker.model)
    first = picker.model.index(0, 0)
    assert first.data(NAME_ROLE) == "Europe/Moscow"  # the zone of the most people first
    assert first.data(Qt.ItemDataRole.DisplayRole) == "Europe/Moscow — MSK +03:00"
    assert "Russia" in first.data(Qt.ItemDataRole.ToolTipRole)
    type_in(qtbot, picker.edit, "IST")
    press(qtbot, picker.edit, Qt.Key.Key_Return)
    qtmodeltester.check(picker.model)  # with the notes above the zones


@pytest.mark.parametrize(
    ("typed", "chosen"),
    [
        pytest.param("new york", "America/New_York", id="city_words"),
        pytest.param("melbourne", "Australia/Melbourne", id="city"),
        pytest.param("japan", "Asia/Tokyo", id="country_with_one_zone"),
        pytest.param("India", "Asia/Kolkata", id="india_not_indiana"),
        pytest.param("NUUK", "America/Nuuk", id="upper_case"),
        pytest.param("calcutta", "Asia/Kolkata", id="old_city_name"),
        pytest.param("europe/berlin", "Europe/Berlin", id="iana_name_any_case"),
        pytest.param("JST", "Asia/Tokyo", id="abbreviation_of_one_zone"),
    ],
)
def test_enter_takes_an_exact_or_the_only_match(picker: ZonePicker, qtbot, typed: str, chosen: str) -> None:
    type_in(qtbot, picker.edit, typed)
    assert picker.model.rowCount() >= 1
    with qtbot.waitSignal(picker.zoneChosen) as blocker:
        press(qtbot, picker.edit, Qt.Key.Key_Return)
    assert blocker.args == [chosen]
    assert picker.zone() == chosen
    assert picker.edit.text().startswith(chosen + " — ")
    assert not picker.completer.popup().isVisible()


@pytest.mark.parametrize(
    ("typed", "first", "note"),
    [
        pytest.param("EST", "America/New_York", "EST is an ambiguous abbreviation, used in United States", id="est"),
        pytest.param("Eastern", "America/New_York", None, id="eastern"),
        pytest.param("IST", "Asia/Kolkata", "IST is an ambiguous abbreviation, used in India", id="ist"),
        pytest.param("UTC+2", "Africa/Cairo", "Zones at UTC+02:00 on 2027-03-01: pick a place", id="utc_plus_2"),
        pytest.param("GMT+1", "Africa/Lagos", "Zones at UTC+01:00 on 2027-03-01: pick a place", id="gmt_plus_1"),
        pytest.param("Germany", "Europe/Berlin", None, id="germany_berlin_and_busingen"),
        pytest.param("United States", "America/New_York", None, id="country_with_many_zones"),
    ],
)
def test_enter_with_several_matches_keeps_the_list_open(
    picker: ZonePicker, qtbot, typed: str, first: str, note: str | None
) -> None:
    type_in(qtbot, picker.edit, typed)
    with qtbot.assertNotEmitted(picker.zoneChosen):
        press(qtbot, picker.edit, Qt.Key.Key_Return)
    popup = picker.completer.popup()
    assert popup.isVisible()
    assert picker.zone() == "UTC" and picker.edit.text() == typed
    notes = picker.model.notes()
    assert notes[-1] == SEVERAL and picker.model.index(len(notes) - 1, 0).data() == SEVERAL
    assert (note is not None) == any(n.startswith(note or "?") for n in notes)
    # The notes head the list and cannot be chosen; the zones follow; Down lands on the first zone.
    assert not picker.model.index(0, 0).flags() & Qt.ItemFlag.ItemIsSelectable
    assert picker.model.index(len(notes), 0).data(NAME_ROLE) == first
    press(qtbot, picker.edit, Qt.Key.Key_Down)
    with qtbot.waitSignal(picker.zoneChosen) as blocker:
        press(qtbot, picker.edit, Qt.Key.Key_Return)
    assert blocker.args == [first]
    assert not popup.isVisible()


def test_abbreviation_lists_each_zone_with_its_offset_now(picker: ZonePicker, qtbot) -> None:
    type_in(qtbot, picker.edit, "IST")
    rows = [picker.model.index(r, 0).data() for r in range(picker.model.rowCount())]
    assert rows[0] == "IST is an ambiguous abbreviation, used in India, Israel and Ireland: pick a place"
    assert rows[1:4] == [
        "Asia/Kolkata — IST +05:30",
        "Asia/Jerusalem — IST +02:00",
        "Europe/Dublin — GMT +00:00 · IST part of the year",
    ]
    assert picker.model.index(0, 0).data(Qt.ItemDataRole.AccessibleTextRole) == rows[0]


def test_no_match_says_so_and_chooses_nothing(picker: ZonePicker, qtbot) -> None:
    with qtbot.assertNotEmitted(picker.zoneChosen):
        type_in(qtbot, picker.edit, "atlantis")
        press(qtbot, picker.edit, Qt.Key.Key_Return)
    assert picker.model.rowCount() == 0
    assert not picker.completer.popup().isVisible()
    assert "No time zone matches “atlantis”" in picker.error.message()
    assert picker.zone() == "UTC"


def test_leaving_the_field_puts_the_zone_back_and_says_nothing_changed(picker: ZonePicker, qtbot) -> None:
    with qtbot.assertNotEmitted(picker.zoneChosen):
        type_in(qtbot, picker.edit, "half typed")
        press(qtbot, picker.edit, Qt.Key.Key_Tab)
    assert not picker.edit.hasFocus()
    assert picker.edit.text() == "UTC — UTC +00:00"
    assert picker.hint.message() == "“half typed” is not a time zone; nothing was changed (the zone is still UTC)"


def test_leaving_the_field_with_a_zone_name_takes_it(picker: ZonePicker, qtbot) -> None:
    with qtbot.waitSignal(picker.zoneChosen) as blocker:
        type_in(qtbot, picker.edit, "Asia/Tokyo")
        press(qtbot, picker.edit, Qt.Key.Key_Tab)
    assert blocker.args == ["Asia/Tokyo"]
    assert picker.edit.text() == "Asia/Tokyo — JST +09:00" and picker.hint.message() == ""


def test_set_zone_is_silent_and_shows_summary_and_note(picker: ZonePicker, qtbot) -> None:
    with qtbot.assertNotEmitted(picker.zoneChosen):
        picker.set_zone("America/Mexico_City")
    assert picker.edit.text() == "America/Mexico_City — CST −06:00"
    assert picker.summary.text() == "CST −06:00 · no DST"
    assert picker.note.message() == "no DST since 2022: CST −06:00 all year (clocks last changed on 2022-10-30)"
    picker.set_zone("America/New_York")
    assert picker.summary.text() == "EST −05:00 · DST Mar–Nov" and picker.note.message() == ""


def test_choosing_the_same_zone_again_emits_nothing(picker: ZonePicker, qtbot) -> None:
    with qtbot.assertNotEmitted(picker.zoneChosen):
        picker.choose("UTC")


def test_show_all_lists_every_zone_and_enter_alone_takes_none(picker: ZonePicker, qtbot) -> None:
    picker.search("berlin")
    qtbot.mouseClick(picker.list_button, Qt.MouseButton.LeftButton)
    assert picker.model.rowCount() > 400 and picker.completer.popup().isVisible()
    with qtbot.assertNotEmitted(picker.zoneChosen):
        press(qtbot, picker.edit, Qt.Key.Key_Return)
    assert picker.zone() == "UTC" and not picker.completer.popup().isVisible()


def test_controls_are_named_and_explained(picker: ZonePicker) -> None:
    for widget in (picker.edit, picker.list_button, picker.summary):
        assert widget.accessibleName() and widget.toolTip()
    assert picker.edit.accessibleName() == "Time zone"


def test_arrow_and_return_in_the_list_pick_the_highlighted_zone(picker: ZonePicker, qtbot) -> None:
    type_in(qtbot, picker.edit, "europe/b")
    popup = picker.completer.popup()
    assert popup.isVisible()
    press(qtbot, picker.edit, Qt.Key.Key_Down)
    press(qtbot, picker.edit, Qt.Key.Key_Down)
    with qtbot.waitSignal(picker.zoneChosen) as blocker:
        press(qtbot, picker.edit, Qt.Key.Key_Return)
    assert blocker.args == ["Europe/Bucharest"]  # Berlin (the most people) first, then Bucharest
    assert picker.zone() == "Europe/Bucharest" and not popup.isVisible()


# --- in the "When" box, on the document ------------------------------------------------------


def test_ambiguous_abbreviation_changes_nothing_in_the_schedule(form: WhenForm, document: SpecDocument, qtbot) -> None:
    edit = zone_field(form)
    type_in(qtbot, edit, "EST")
    press(qtbot, edit, Qt.Key.Key_Return)
    assert document.value("timeZone") == "America/New_York"
    assert document.undo_stack.count() == 0
    assert form.zone.completer.popup().isVisible()
    assert SEVERAL in form.zone.model.notes()


def test_india_sets_kolkata_in_the_schedule(form: WhenForm, document: SpecDocument, qtbot) -> None:
    edit = zone_field(form)
    type_in(qtbot, edit, "India")
    press(qtbot, edit, Qt.Key.Key_Return)
    assert document.value("timeZone") == "Asia/Kolkata"
    assert edit.text() == "Asia/Kolkata — IST +05:30"


def test_leaving_with_an_unknown_name_shows_the_schedules_zone_again(
    form: WhenForm, document: SpecDocument, qtbot
) -> None:
    edit = zone_field(form)
    type_in(qtbot, edit, "Nowhere/Else")
    press(qtbot, edit, Qt.Key.Key_Tab)
    assert not edit.hasFocus()
    assert document.value("timeZone") == "America/New_York" and document.undo_stack.count() == 0
    assert edit.text() == "America/New_York — EST −05:00"
    assert form.zone.hint.message() == (
        "“Nowhere/Else” is not a time zone; nothing was changed (the zone is still America/New_York)"
    )
