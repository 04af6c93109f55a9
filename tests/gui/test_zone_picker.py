"""The zone picker: search by words, Enter picks the best match, the summary
and rule-change note follow the zone, and programmatic changes stay silent."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from scheduler_gui.designer.zone_picker import NAME_ROLE, ZonePicker


@pytest.fixture
def picker(clock, qtbot) -> ZonePicker:
    widget = ZonePicker(clock)
    qtbot.addWidget(widget)
    widget.set_zone("UTC")
    widget.resize(420, widget.sizeHint().height())
    widget.show()
    return widget


def test_model_passes_the_model_tester(picker: ZonePicker, qtmodeltester) -> None:
    qtmodeltester.check(picker.model)
    picker.search("europe")
    qtmodeltester.check(picker.model)
    first = picker.model.index(0, 0)
    assert first.data(NAME_ROLE) == "Europe/Amsterdam"
    assert first.data(Qt.ItemDataRole.DisplayRole) == "Europe/Amsterdam — CET +01:00"
    assert "Netherlands" in first.data(Qt.ItemDataRole.ToolTipRole)


@pytest.mark.parametrize(
    ("typed", "chosen"),
    [
        pytest.param("new york", "America/New_York", id="new_york_words"),
        pytest.param("melbourne", "Australia/Melbourne", id="melbourne"),
        pytest.param("japan", "Asia/Tokyo", id="country"),
        pytest.param("NUUK", "America/Nuuk", id="upper_case"),
    ],
)
def test_typing_and_enter_choose_the_best_match(picker: ZonePicker, qtbot, typed: str, chosen: str) -> None:
    picker.edit.setFocus()
    picker.edit.selectAll()
    qtbot.keyClicks(picker.edit, typed)
    assert picker.model.rowCount() >= 1
    with qtbot.waitSignal(picker.zoneChosen) as blocker:
        picker.choose_first()
    assert blocker.args == [chosen]
    assert picker.zone() == chosen
    assert picker.edit.text().startswith(chosen + " — ")


def test_return_key_picks(picker: ZonePicker, qtbot) -> None:
    picker.edit.setFocus()
    picker.edit.selectAll()
    qtbot.keyClicks(picker.edit, "new york")
    picker.completer.popup().hide()
    with qtbot.waitSignal(picker.zoneChosen) as blocker:
        qtbot.keyClick(picker.edit, Qt.Key.Key_Return)
    assert blocker.args == ["America/New_York"]


def test_no_match_says_so_and_chooses_nothing(picker: ZonePicker, qtbot) -> None:
    picker.edit.setFocus()
    picker.edit.selectAll()
    with qtbot.assertNotEmitted(picker.zoneChosen):
        qtbot.keyClicks(picker.edit, "atlantis")
        picker.choose_first()
    assert picker.model.rowCount() == 0
    assert "No time zone matches “atlantis”" in picker.error.message()
    assert picker.zone() == "UTC"


def test_leaving_the_field_restores_the_chosen_zone(picker: ZonePicker, qtbot) -> None:
    picker.edit.setText("half typed")
    picker.edit.editingFinished.emit()
    assert picker.edit.text() == "UTC — UTC +00:00"


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


def test_show_all_lists_every_zone(picker: ZonePicker) -> None:
    picker.search("berlin")
    picker.show_all()
    assert picker.model.rowCount() > 400


def test_controls_are_named_and_explained(picker: ZonePicker) -> None:
    for widget in (picker.edit, picker.list_button, picker.summary):
        assert widget.accessibleName() and widget.toolTip()


def test_arrow_and_return_in_the_list_pick_the_highlighted_zone(picker: ZonePicker, qtbot) -> None:
    qtbot.waitExposed(picker)
    picker.edit.setFocus()
    picker.edit.selectAll()
    qtbot.keyClicks(picker.edit, "berlin")
    popup = picker.completer.popup()
    assert popup.isVisible()
    qtbot.keyClick(popup, Qt.Key.Key_Down)
    with qtbot.waitSignal(picker.zoneChosen) as blocker:
        qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert blocker.args == ["Europe/Berlin"]
    assert picker.zone() == "Europe/Berlin" and not popup.isVisible()
