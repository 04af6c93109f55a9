"""The "when things go wrong" panel: friendly durations stored as ISO 8601,
bad ones refused next to their field, policies written with their companions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt

from core.time.durations import format_duration
from scheduler_gui.context import AppContext
from scheduler_gui.designer.duration_text import friendly, parse_friendly_duration
from scheduler_gui.designer.recovery import RecoveryPanel
from scheduler_gui.workspace.document import SpecDocument


@pytest.fixture
def panel(document: SpecDocument, ctx: AppContext, qtbot) -> RecoveryPanel:
    widget = RecoveryPanel(document, ctx)
    qtbot.addWidget(widget)
    widget.show()
    return widget


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("15 min", timedelta(minutes=15), id="words"),
        pytest.param("PT15M", timedelta(minutes=15), id="iso"),
        pytest.param("pt1h30m", timedelta(hours=1, minutes=30), id="iso_lower"),
        pytest.param("1 h 30 min", timedelta(hours=1, minutes=30), id="hours_minutes"),
        pytest.param("90s", timedelta(seconds=90), id="no_space"),
        pytest.param("2 days, 3 hours", timedelta(days=2, hours=3), id="comma"),
        pytest.param("1 week", timedelta(weeks=1), id="week"),
        pytest.param("0", timedelta(0), id="zero"),
        pytest.param("1.5 h", timedelta(minutes=90), id="fraction"),
    ],
)
def test_friendly_durations(text: str, expected: timedelta) -> None:
    assert parse_friendly_duration(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("soon", "is not a length of time", id="word"),
        pytest.param("15 minz", "unknown unit 'minz'", id="unit"),
        pytest.param("P1M", "months", id="iso_month"),
        pytest.param("15", "is not a length of time", id="bare_number"),
        pytest.param("15 min later", "is not a length of time", id="trailing"),
    ],
)
def test_unfriendly_durations(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_friendly_duration(text)


@settings(max_examples=200, deadline=None)
@given(seconds=st.integers(min_value=0, max_value=400 * 86400))
def test_shown_words_read_back_as_the_same_duration(seconds: int) -> None:
    iso = format_duration(timedelta(seconds=seconds))
    assert parse_friendly_duration(friendly(iso)) == timedelta(seconds=seconds)
    assert parse_friendly_duration(iso) == timedelta(seconds=seconds)


def test_words_are_stored_as_iso(panel: RecoveryPanel, document: SpecDocument, qtbot) -> None:
    qtbot.keyClicks(panel.lateness.edit, "1 h 30 min")
    assert document.value("latenessWindow") == "PT1H30M"
    assert document.valid
    panel.lateness.edit.editingFinished.emit()
    assert panel.lateness.edit.text() == "1 h 30 min"
    qtbot.keyClicks(panel.jitter.edit, "PT5M")
    assert document.value("jitter") == "PT5M"
    assert "up to 5 min after its time" in panel.jitter_meaning.text()


def test_bad_duration_shows_its_message_and_waits(panel: RecoveryPanel, document: SpecDocument, qtbot) -> None:
    qtbot.keyClicks(panel.catch_up_window.edit, "soon")
    assert "catchUpWindow" not in document.data and not document.can_save
    assert str(document.blocking()).startswith("catchUpWindow: 'soon' is not a length of time")
    assert panel.catch_up_window.problem.isVisible()
    assert "'soon' is not a length of time" in panel.catch_up_window.problem.text()
    panel.catch_up_window.edit.clear()
    qtbot.keyClicks(panel.catch_up_window.edit, "1 day")
    assert document.can_save
    assert document.value("catchUpWindow") == "P1D"
    assert not panel.catch_up_window.problem.isVisible()
    assert "Nothing older than 1 day" in panel.misfire_meaning.text()


def test_clearing_a_duration_restores_its_default(panel: RecoveryPanel, document: SpecDocument, qtbot) -> None:
    qtbot.keyClicks(panel.lateness.edit, "5 min")
    assert document.value("latenessWindow") == "PT5M"
    panel.lateness.edit.selectAll()
    qtbot.keyClick(panel.lateness.edit, Qt.Key.Key_Delete)
    assert "latenessWindow" not in document.data
    assert document.valid


def test_misfire_policy_carries_max_catch_up(panel: RecoveryPanel, document: SpecDocument, qtbot) -> None:
    panel.misfire.setCurrentIndex(panel.misfire.findData("SKIP"))
    panel.misfire.activated.emit(panel.misfire.currentIndex())
    assert document.value("misfirePolicy") == "SKIP"
    assert "maxCatchUp" not in document.data
    assert document.valid
    assert not panel.max_catch_up.isEnabled()
    assert panel.misfire_meaning.text() == "A run missed by more than 15 min is not made up."
    panel.misfire.setCurrentIndex(panel.misfire.findData("CATCH_UP_BOUNDED"))
    panel.misfire.activated.emit(panel.misfire.currentIndex())
    assert (document.value("misfirePolicy"), document.value("maxCatchUp")) == ("CATCH_UP_BOUNDED", 1)
    panel.max_catch_up.setValue(3)
    assert document.value("maxCatchUp") == 3
    assert "newest missed 3 runs are made up" in panel.misfire_meaning.text()
    document.undo_stack.undo()
    assert panel.max_catch_up.value() == 1


def test_overlap_and_retry(panel: RecoveryPanel, document: SpecDocument, qtbot) -> None:
    panel.overlap.setCurrentIndex(panel.overlap.findData("QUEUE_ALL"))
    panel.overlap.activated.emit(panel.overlap.currentIndex())
    assert document.value("overlapPolicy") == "QUEUE_ALL"
    assert "wait and start one after another" in panel.overlap_meaning.text()
    panel.max_attempts.setValue(4)
    assert document.value("retry.maxAttempts") == 4
    assert "up to 4 times in all, waiting 30 s, then 1 min, then 2 min" in panel.retry_meaning.text()
    qtbot.keyClicks(panel.initial_backoff.edit, "20 min")
    assert document.value("retry.initialBackoff") == "PT20M"
    # Longer than the longest wait (10 min by default): the core says so next to that field.
    assert not document.valid
    assert "shorter than retry.initialBackoff" in panel.max_backoff.problem.text()


def test_controls_are_named_and_explained(panel: RecoveryPanel) -> None:
    from PySide6.QtWidgets import QComboBox, QLineEdit, QSpinBox

    for widget in panel.findChildren(QLineEdit) + panel.findChildren(QComboBox) + panel.findChildren(QSpinBox):
        if widget.objectName() == "qt_spinbox_lineedit":
            continue
        assert widget.accessibleName(), widget
        assert widget.toolTip() or isinstance(widget.parent(), QSpinBox), widget


def test_a_zero_count_is_reported_until_the_box_is_not_in_use(
    panel: RecoveryPanel, document: SpecDocument, qtbot
) -> None:
    panel.max_catch_up.setFocus()
    panel.max_catch_up.selectAll()
    qtbot.keyClicks(panel.max_catch_up, "0")
    qtbot.keyClick(panel.max_catch_up, Qt.Key.Key_Tab)
    assert panel.max_catch_up.text() == "0" and document.value("maxCatchUp") == 1
    assert panel.max_catch_up_problem.text() == "⚠ the number of missed runs to make up must be at least 1"
    assert not document.can_save
    # Skipping missed runs leaves nothing to make up: the box is greyed out and holds the schedule back no more.
    panel.misfire.setCurrentIndex(panel.misfire.findData("SKIP"))
    panel.misfire.activated.emit(panel.misfire.currentIndex())
    assert not panel.max_catch_up.isEnabled() and panel.max_catch_up_problem.isHidden()
    assert document.can_save and "maxCatchUp" not in document.data
