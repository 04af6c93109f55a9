"""The window's temporary messages: one line of whole words in the status bar, all of it in the
tooltip and for a screen reader, gone when its time is up, and under an action's status tip only
while the mouse is on the action."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QStatusTipEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from shell_fixtures import window_fixture  # noqa: F401

from scheduler_gui.main_window import MainWindow
from scheduler_gui.message_bar import TITLE


def _shown(window: MainWindow, qtbot: Any, width: int = 1280, height: int = 800) -> None:
    window.resize(width, height)
    window.show()
    qtbot.waitExposed(window)
    QApplication.processEvents()


def test_a_message_shows_for_its_time_and_the_items_it_covered_come_back(window: MainWindow, qtbot: Any) -> None:
    _shown(window, qtbot)
    bar, label = window.messages, window.messages.label
    covered = (window.engine_status, window.next_label)
    assert all(item.isVisible() for item in covered) and label.text() == ""
    assert label.accessibleName() == TITLE
    with qtbot.waitSignal(bar.messageChanged) as changed:
        window.say("Saved /tmp/work/daily-ops-summary.yaml", 5000)
    assert changed.args == ["Saved /tmp/work/daily-ops-summary.yaml"]
    QApplication.processEvents()
    assert (bar.timer.isActive(), bar.timer.interval()) == (True, 5000)
    assert label.shown_text() == bar.currentMessage() == "Saved /tmp/work/daily-ops-summary.yaml"
    assert not any(item.isVisible() for item in covered)  # the toolbar says them; the message has their room
    bar.timer.timeout.emit()  # its five seconds are up
    QApplication.processEvents()
    assert bar.currentMessage() == label.text() == label.toolTip() == ""
    assert label.accessibleName() == TITLE
    assert all(item.isVisible() for item in covered)


def test_a_message_without_a_time_stays_until_the_next_one(window: MainWindow, qtbot: Any) -> None:
    _shown(window, qtbot)
    bar = window.messages
    window.say("Saved a.yaml", 5000)
    window.say("Cannot save while the schedule has a problem: rule: FREQ has no value")
    assert not bar.timer.isActive()  # the first message's time does not end the second
    assert bar.currentMessage() == "Cannot save while the schedule has a problem: rule: FREQ has no value"
    bar.clearMessage()
    assert bar.currentMessage() == "" and not bar.timer.isActive()


@pytest.mark.parametrize(
    ("message", "line"),
    [
        pytest.param(
            "Cannot save the schedule\nPermission denied", "Cannot save the schedule Permission denied", id="lines"
        ),
        pytest.param("Paused the demo  inbox-sync", "Paused the demo inbox-sync", id="spaces"),
    ],
)
def test_a_message_of_several_lines_shows_on_one_and_keeps_its_lines_in_the_tooltip(
    window: MainWindow, qtbot: Any, message: str, line: str
) -> None:
    _shown(window, qtbot)
    window.say(message)
    label = window.messages.label
    assert label.shown_text() == line
    assert window.messages.currentMessage() == label.toolTip() == label.accessibleDescription() == message


def test_a_status_tip_shows_over_the_message_and_gives_it_back(window: MainWindow, qtbot: Any) -> None:
    """Qt sends a status tip when the mouse rests on a menu item or a tool button, and an empty one
    when it leaves: the tip shows in whole words too, and the message it covered comes back."""
    _shown(window, qtbot)
    bar = window.messages
    window.say("Paused the demo inbox-sync after a first run that needs attention", 15_000)
    tip = str(window.acts.publish.statusTip())
    assert tip
    QApplication.sendEvent(window, QStatusTipEvent(tip))
    assert bar.currentMessage() == bar.label.shown_text() == tip
    QApplication.sendEvent(window, QStatusTipEvent(""))
    assert bar.currentMessage() == "Paused the demo inbox-sync after a first run that needs attention"
    assert bar.timer.isActive()


def test_a_key_for_an_action_that_is_off_says_why_in_whole_words_at_1024(window: MainWindow, qtbot: Any) -> None:
    """Ctrl+Shift+R (Run Now) on a schedule that is not published: the reason, as far as it fits."""
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    _shown(window, qtbot, 1024, 640)
    QTest.keyClick(window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    QApplication.processEvents()
    bar, label = window.messages, window.messages.label
    message = bar.currentMessage()
    assert message.startswith("Run Now: ") and label.toolTip() == message
    shown = label.shown_text()
    assert shown.endswith("…") and message.startswith(shown[:-1]) and message[len(shown) - 1] in " ·:", shown
    assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width()
