"""The window's keys, pressed as a person presses them: Ctrl+Y redoes, Ctrl+Q quits,
Ctrl+Shift+E starts and pauses the engine, Ctrl+Shift+R and Ctrl+Shift+P open
their dialogs for a published schedule and, for one that is not, only say why;
every key shows in its menu. The schedule actions follow the schedule's state."""

from __future__ import annotations

from typing import Any

import pytest
from gui_support import DEMO
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QToolButton
from shell_fixtures import window_fixture  # noqa: F401

from core.ledger.publish import pause, publish
from core.spec.files import load_spec
from core.spec.validation import parse_spec
from scheduler_gui.main_window import MainWindow

SID = "daily-ops-summary"
CTRL = Qt.KeyboardModifier.ControlModifier
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
PUBLISH_FIRST = "Publish this schedule first (Schedule ▸ Publish…, Ctrl+Enter)"


def _shown(window: MainWindow, qtbot: Any) -> MainWindow:
    """The window shown and active, the focus on the sidebar (not in a text field, which keeps its own keys)."""
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    window.sidebar.schedule_view.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.sidebar.schedule_view, timeout=5_000)
    return window


def _ready(window: MainWindow, qtbot: Any) -> MainWindow:
    """Shown, with the ledger open."""
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    return _shown(window, qtbot)


def _press(window: MainWindow, key: Qt.Key, modifiers: Qt.KeyboardModifier) -> None:
    QTest.keyClick(window, key, modifiers)
    QApplication.processEvents()


def _menu_of(window: MainWindow, name: str) -> QMenu:
    act = getattr(window.acts, name)
    menus = [m for m in window.menuBar().findChildren(QMenu) if act in m.actions()]
    assert menus, name
    return menus[0]


def _summary_says(window: MainWindow, qtbot: Any, state: str) -> None:
    """Wait until the window's summaries show the schedule in ``state`` (they are read off the GUI thread)."""

    def seen() -> bool:
        found = next((s for s in window.hub.summaries if s.schedule_id == SID), None)
        return found is not None and found.state.value == state

    window.hub.refresh_summaries()
    qtbot.waitUntil(seen, timeout=30_000)


def _publish(window: MainWindow) -> None:
    spec = load_spec(str(DEMO / f"{SID}.yaml"))
    with window.ctx.ledger.write() as session:
        publish(session, parse_spec(spec.model_dump(by_alias=True, mode="json", exclude_none=True)), window.ctx.clock)


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The schedule actions' dialogs, recorded instead of shown."""
    import scheduler_gui.monitor.schedule_actions as schedule_actions

    seen: list[tuple[str, str]] = []
    for name in ("pause", "resume", "disable", "run_now", "backfill"):
        monkeypatch.setattr(
            schedule_actions, name, lambda ctx, sid, parent, name=name: seen.append((name, sid)) is not None
        )
    return seen


@pytest.mark.parametrize(
    ("name", "key", "menu"),
    [
        ("run_now", "Ctrl+Shift+R", "&Schedule"),
        ("pause_schedule", "Ctrl+Shift+P", "&Schedule"),
        ("engine_toggle", "Ctrl+Shift+E", "E&ngine"),
        ("quit", "Ctrl+Q", "&File"),
        ("redo", "Ctrl+Shift+Z", "&Edit"),
    ],
    ids=["run_now", "pause", "engine", "quit", "redo"],
)
def test_each_key_shows_in_its_menu_and_tooltip(window: MainWindow, name: str, key: str, menu: str) -> None:
    act = getattr(window.acts, name)
    assert act.shortcut() == QKeySequence(key)  # the menu writes its first key beside the item
    assert _menu_of(window, name).title() == menu
    assert key in act.toolTip()


def test_ctrl_y_is_a_second_redo(window: MainWindow, qtbot: Any) -> None:
    _shown(window, qtbot)
    doc = window.document
    assert doc is not None
    assert [k.toString() for k in window.acts.redo.shortcuts()] == ["Ctrl+Shift+Z", "Ctrl+Y"]
    assert "Ctrl+Shift+Z, Ctrl+Y" in window.acts.redo.toolTip()
    assert window.acts.redo.text() == "&Redo\tCtrl+Shift+Z, Ctrl+Y"  # the Edit menu writes both keys
    doc.set_value("timeZone", "Europe/Paris")
    _press(window, Qt.Key.Key_Z, CTRL)
    assert doc.value("timeZone") == "America/New_York"
    # After an undo the tooltip names the edit to redo, and still both keys.
    assert window.acts.redo.toolTip().endswith("(Ctrl+Shift+Z, Ctrl+Y)")
    _press(window, Qt.Key.Key_Y, CTRL)
    assert doc.value("timeZone") == "Europe/Paris"
    _press(window, Qt.Key.Key_Z, CTRL)
    _press(window, Qt.Key.Key_Z, CTRL_SHIFT)
    assert doc.value("timeZone") == "Europe/Paris"


def test_ctrl_q_quits(window: MainWindow, qtbot: Any) -> None:
    _shown(window, qtbot)
    _press(window, Qt.Key.Key_Q, CTRL)
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=10_000)


def test_ctrl_shift_e_starts_and_pauses_the_engine(window: MainWindow, qtbot: Any) -> None:
    _ready(window, qtbot)
    assert window.hub.engine_state != "running"
    _press(window, Qt.Key.Key_E, CTRL_SHIFT)
    qtbot.waitUntil(lambda: window.hub.engine_state == "running", timeout=20_000)
    assert window.acts.engine_toggle.text() == "Pause &Engine"
    _press(window, Qt.Key.Key_E, CTRL_SHIFT)
    qtbot.waitUntil(lambda: window.hub.engine_state == "paused", timeout=20_000)


def test_an_unpublished_schedule_keeps_its_actions_off_and_says_why(
    window: MainWindow, qtbot: Any, opened: list[tuple[str, str]]
) -> None:
    _ready(window, qtbot)
    acts = window.acts
    assert window.document is not None and window.document.value("scheduleId") == SID
    for act in (acts.run_now, acts.pause_schedule, acts.resume_schedule, acts.disable_schedule, acts.backfill):
        assert not act.isEnabled(), act.text()
        assert act.toolTip().startswith(PUBLISH_FIRST), act.toolTip()
        assert "schedctl" not in act.toolTip() and "schedctl" not in act.statusTip()
    _press(window, Qt.Key.Key_R, CTRL_SHIFT)
    _press(window, Qt.Key.Key_P, CTRL_SHIFT)
    assert opened == []  # nothing opens ...
    message = window.statusBar().currentMessage()
    assert message.startswith("Pause Schedule: " + PUBLISH_FIRST)  # ... but the window says why
    _press(window, Qt.Key.Key_R, CTRL_SHIFT)
    assert window.statusBar().currentMessage().startswith("Run Now: " + PUBLISH_FIRST)
    assert "schedctl" not in window.statusBar().currentMessage()


def test_the_schedule_actions_follow_the_schedules_state(
    window: MainWindow, qtbot: Any, opened: list[tuple[str, str]]
) -> None:
    _ready(window, qtbot)
    acts = window.acts
    gate = window.toolbar.findChild(QToolButton, "scheduleGateButton")
    _publish(window)
    _summary_says(window, qtbot, "active")
    # Active: everything but Resume; the toolbar's button pauses.
    assert [a.isEnabled() for a in (acts.run_now, acts.pause_schedule, acts.disable_schedule, acts.backfill)] == [
        True
    ] * 4
    assert not acts.resume_schedule.isEnabled()
    assert acts.resume_schedule.toolTip() == f"{SID} is active: there is nothing to resume"
    assert gate.defaultAction() is acts.pause_schedule and gate.text() == "Pause Schedule"
    _press(window, Qt.Key.Key_R, CTRL_SHIFT)
    _press(window, Qt.Key.Key_P, CTRL_SHIFT)
    assert opened == [("run_now", SID), ("pause", SID)]

    # Paused: Resume takes the key and the toolbar's button; Run Now waits for it.
    with window.ctx.ledger.write() as session:
        pause(session, SID, window.ctx.clock, "maintenance")
    _summary_says(window, qtbot, "paused")
    assert acts.resume_schedule.isEnabled() and not acts.pause_schedule.isEnabled()
    assert acts.resume_schedule.shortcut() == QKeySequence("Ctrl+Shift+P") and acts.pause_schedule.shortcuts() == []
    assert gate.defaultAction() is acts.resume_schedule and gate.text() == "Resume Schedule"
    assert not acts.run_now.isEnabled() and not acts.backfill.isEnabled()
    resume_first = f"{SID} is paused: resume it first (Schedule ▸ Resume Schedule…, Ctrl+Shift+P)"
    assert acts.run_now.toolTip().startswith(resume_first)
    opened.clear()
    _press(window, Qt.Key.Key_P, CTRL_SHIFT)
    _press(window, Qt.Key.Key_R, CTRL_SHIFT)
    assert opened == [("resume", SID)]
    assert window.statusBar().currentMessage() == f"Run Now: {resume_first}"
