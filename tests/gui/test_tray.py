"""The window's tray, as a person meets it: the close button hides the window in the tray
while the engine runs (said once; a setting turns it off), Quit (Ctrl+Q, the tray's Quit)
stops the engine, the tray's Open and its messages bring the window back on Needs attention,
its messages say what needs a person in the core's words, ``--minimized`` starts hidden in
the tray; and while it follows a ledger the window owns that ledger's name on the session bus.
A tray is played with ``tray_available`` (offscreen there is none)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from monitor_support import interval_spec, put, run_at
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QCheckBox, QDialogButtonBox, QMessageBox

from core.clock import FixedClock
from core.desktop.notify.desktop_bus import DesktopBus, window_name
from core.desktop.notify.needs import TITLE, Need, NeedKind
from scheduler_gui.app import Options, show_first
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow
from scheduler_gui.monitor.engine_settings import EngineSettingsDialog
from scheduler_gui.monitor.hide_to_tray import HIDE_KEY, SAID_TEXT
from scheduler_gui.monitor.states import EngineState
from scheduler_gui.monitor.tray import NOTIFY_KEY
from tests.session_bus import bus_daemon, private_bus

__all__ = ["bus_daemon", "private_bus"]

# A tray icon made on the offscreen platform: Qt says it cannot follow the (X11) tray's window.
pytestmark = pytest.mark.qt_log_ignore("systemTrayWindowChanged")

KILL_SELF = {"argv": ["/bin/sh", "-c", "kill -9 $$"], "effect": "non_idempotent"}


@pytest.fixture
def window(ctx: AppContext, qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[MainWindow]:
    """The window on a desktop with a tray."""

    def unexpected(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"unexpected dialog: {args[1:3]}")

    monkeypatch.setattr(QMessageBox, "warning", unexpected)
    monkeypatch.setattr(QMessageBox, "question", unexpected)
    w = MainWindow(ctx, tray_available=lambda: True)
    w.open_initial()
    yield w
    if w.document is not None:
        w.document.undo_stack.setClean()
    w.quit()
    w.deleteLater()


def shown(window: MainWindow, qtbot: Any, *, engine: bool) -> MainWindow:
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor(start_engine=engine)
    window.show()
    qtbot.waitExposed(window)
    if engine:
        qtbot.waitUntil(lambda: window.hub.engine_state is EngineState.RUNNING, timeout=15_000)
    return window


def close_button(window: MainWindow) -> None:
    """What the window manager's close button does."""
    window.close()


def test_the_close_button_hides_in_the_tray_and_says_so_once(window: MainWindow, qtbot: Any) -> None:
    shown(window, qtbot, engine=True)
    close_button(window)
    assert not window.isVisible()
    assert window.hub.engine_state is EngineState.RUNNING  # the schedules keep running
    assert window.tray.messages == [SAID_TEXT]
    # Back from the tray, and closed again: hidden again, nothing said again.
    window.tray.openRequested.emit()
    assert window.isVisible() and window.current_view() == "attention"
    close_button(window)
    assert not window.isVisible() and window.tray.messages == [SAID_TEXT]
    assert window.ctx.settings.value("tray/hide_said") in (True, "true")


def test_said_once_across_starts(ctx: AppContext, qtbot: Any) -> None:
    ctx.settings.setValue("tray/hide_said", True)
    w = MainWindow(ctx, tray_available=lambda: True)
    w.open_initial()
    shown(w, qtbot, engine=True)
    close_button(w)
    assert not w.isVisible() and w.tray.messages == []
    w.quit()
    w.deleteLater()


def test_with_hiding_off_the_close_button_closes(window: MainWindow, qtbot: Any) -> None:
    window.ctx.settings.setValue(HIDE_KEY, False)
    shown(window, qtbot, engine=True)
    with qtbot.waitSignal(window.closed, timeout=30_000):
        close_button(window)
    assert window.hub.engine_state is not EngineState.RUNNING


def test_without_a_tray_or_an_engine_the_close_button_closes(ctx: AppContext, window: MainWindow, qtbot: Any) -> None:
    shown(window, qtbot, engine=False)
    with qtbot.waitSignal(window.closed, timeout=30_000):
        close_button(window)
    trayless = MainWindow(ctx, tray_available=lambda: False)
    trayless.open_initial()
    shown(trayless, qtbot, engine=True)
    with qtbot.waitSignal(trayless.closed, timeout=30_000):
        close_button(trayless)
    assert trayless.hub.engine_state is not EngineState.RUNNING
    trayless.deleteLater()


def test_ctrl_q_quits_and_stops_the_engine(window: MainWindow, qtbot: Any) -> None:
    shown(window, qtbot, engine=True)
    with qtbot.waitSignal(window.closed, timeout=30_000):
        QTest.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert not window.isVisible()
    assert window.hub.engine_state is not EngineState.RUNNING
    assert window.tray.icon is not None and not window.tray.icon.isVisible()


def test_the_trays_quit_stops_the_engine_from_hiding(window: MainWindow, qtbot: Any) -> None:
    shown(window, qtbot, engine=True)
    close_button(window)
    assert not window.isVisible()
    menu = window.tray.menu
    assert menu is not None
    assert [a.text() for a in menu.actions() if not a.isSeparator()] == ["&Open Tidemark", "&Quit"]
    with qtbot.waitSignal(window.closed, timeout=30_000):
        next(a for a in menu.actions() if a.text() == "&Quit").trigger()
    assert window.hub.engine_state is not EngineState.RUNNING


def test_open_and_a_clicked_message_raise_the_window_on_needs_attention(window: MainWindow, qtbot: Any) -> None:
    shown(window, qtbot, engine=True)
    close_button(window)
    menu = window.tray.menu
    assert menu is not None
    next(a for a in menu.actions() if a.text() == "&Open Tidemark").trigger()
    assert window.isVisible() and window.current_view() == "attention"
    window.show_view("designer")
    close_button(window)
    assert window.tray.icon is not None
    window.tray.icon.messageClicked.emit()
    assert window.isVisible() and window.current_view() == "attention"


def test_the_tray_tells_a_new_unknown_effect_in_the_cores_words(window: MainWindow, qtbot: Any) -> None:
    shown(window, qtbot, engine=False)
    tray = window.tray
    qtbot.waitUntil(lambda: not tray.busy, timeout=15_000)  # the first look, taken when the ledger opened
    assert tray.messages == []  # what waited when the ledger opened is on the badge already
    ctx = window.ctx
    put(ctx, interval_spec("lost-backup", KILL_SELF))
    run_at(ctx, 5.5)

    def told() -> bool:
        if not tray.busy:
            tray.look()
        return bool(tray.messages)

    qtbot.waitUntil(told, timeout=20_000)
    assert tray.messages == ["1 run needs a decision: lost-backup unknown effect"]
    tray.look()
    qtbot.waitUntil(lambda: not tray.busy, timeout=15_000)
    assert len(tray.messages) == 1  # never the same twice


def test_the_four_kinds_in_one_message_and_nothing_when_turned_off(window: MainWindow, clock: FixedClock) -> None:
    tray = window.tray
    tray.see([])
    needs = [
        Need("o1", NeedKind.UNKNOWN_EFFECT, "backup"),
        Need("o2", NeedKind.FAILED, "report"),
        Need("sync (waiting for an engine)", NeedKind.WAITING, "sync"),
        Need("billing (tz drift)", NeedKind.DRIFT, "billing"),
    ]
    notice = tray.see(needs)
    assert notice is not None and notice.title == TITLE
    assert tray.messages == [
        "4 things need a decision: backup unknown effect, report failed, sync waiting for an engine, "
        "billing tzdata drift"
    ]
    window.ctx.settings.setValue(NOTIFY_KEY, False)
    clock.advance(timedelta(minutes=5))
    assert tray.see([*needs, Need("o3", NeedKind.FAILED, "report")]) is None
    assert len(tray.messages) == 1


def test_a_schedule_id_with_markup_goes_to_the_desktop_escaped(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Linux Qt hands the tray's message to the notification service as its body, which may read
    markup: a forged id's link, bold and entity are escaped there, and shown as written."""
    tray = window.tray
    assert tray.icon is not None
    shown_messages: list[tuple[str, str]] = []
    monkeypatch.setattr(tray.icon, "showMessage", lambda title, text, *_: shown_messages.append((title, text)))
    tray.see([])
    tray.see([Need("o1", NeedKind.FAILED, '<a href="file:///">r</a><b>x</b>&amp;')])
    assert tray.messages == ['1 run needs a decision: <a href="file:///">r</a><b>x</b>&amp; failed']
    assert shown_messages == [
        (TITLE, '1 run needs a decision: &lt;a href="file:///"&gt;r&lt;/a&gt;&lt;b&gt;x&lt;/b&gt;&amp;amp; failed')
    ]


def test_minimized_starts_hidden_in_the_tray_else_minimized(ctx: AppContext, qtbot: Any) -> None:
    opts = Options(None, None, None, None, None, (1280, 800), False, None, True)
    with_tray = MainWindow(ctx, tray_available=lambda: True)
    show_first(with_tray, opts)
    assert not with_tray.isVisible() and with_tray.tray.available
    without = MainWindow(ctx, tray_available=lambda: False)
    show_first(without, opts)
    assert without.isVisible() and without.isMinimized()
    for w in (with_tray, without):
        w.quit()
        w.deleteLater()


def test_the_window_owns_its_ledgers_name_while_it_runs(
    window: MainWindow, qtbot: Any, private_bus: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", private_bus)
    bus = DesktopBus.connect(lambda: None, private_bus)
    try:
        shown(window, qtbot, engine=False)
        name = window_name(window.ctx.ledger.where)
        qtbot.waitUntil(lambda: bus.window_running(name), timeout=10_000)  # claimed off the GUI thread
        assert bus.window_running(name)
        window.quit()
        assert not bus.window_running(name)
    finally:
        bus.close()


def test_engine_settings_turn_the_tray_off(ctx: AppContext, qtbot: Any, tmp_path: Path) -> None:
    dialog = EngineSettingsDialog(ctx.settings)
    qtbot.addWidget(dialog)
    dialog.show()
    boxes = {b.accessibleName(): b for b in dialog.findChildren(QCheckBox)}
    assert list(boxes) == [
        "Notify me when a person is needed",
        "Hide in the tray when the window is closed while the engine runs",
    ]
    assert all(b.isChecked() for b in boxes.values())
    assert dialog.grab().save(str(tmp_path / "engine_settings.png"))
    for box in boxes.values():
        box.setFocus()
        QTest.keyClick(box, Qt.Key.Key_Space)
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    QTest.mouseClick(save, Qt.MouseButton.LeftButton)
    assert ctx.settings.value(NOTIFY_KEY) in (False, "false")
    assert ctx.settings.value(HIDE_KEY) in (False, "false")


def test_the_tray_menu_renders(window: MainWindow, tmp_path: Path) -> None:
    menu = window.tray.menu
    assert menu is not None
    menu.adjustSize()
    assert menu.grab().save(str(tmp_path / "tray_menu.png"))


def test_the_tray_leaves_the_ledger_modules_for_later() -> None:
    """The window shows before SQLAlchemy loads (the ledger opens after the first paint): the
    tray, built with the window, must not pull it in."""
    probe = (
        "import sys\n"
        "import scheduler_gui.app, scheduler_gui.main_window\n"
        "print(','.join(sorted(m for m in ('sqlalchemy', 'core.ledger.access') if m in sys.modules)))\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True, env=env
    )
    assert done.stdout.strip() == ""
