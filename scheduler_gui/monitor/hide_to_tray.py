"""The close button while the engine runs: the window hides in the tray instead of
stopping the engine, so that schedules keep running and the tray keeps telling
what needs a person.

It hides only when all of these hold: the person did not ask to quit (File ▸
Quit, Ctrl+Q, the tray's Quit), hiding is on (Engine ▸ Engine Settings…, on by
default), a tray is there (:attr:`AttentionTray.available`) and the engine
runs. The first time, the tray says so, once (remembered in the settings).
Quit closes the window by the existing rules: the unsaved-changes question,
then the question about running tasks (:mod:`scheduler_gui.monitor.close_guard`),
then the engine stops.
"""

from __future__ import annotations

from typing import Any

#: Settings keys: whether the close button hides while the engine runs; whether that was said.
HIDE_KEY = "tray/hide_on_close"
SAID_KEY = "tray/hide_said"

SAID_TITLE = "Tidemark is still running"
SAID_TEXT = (
    "The engine keeps running your schedules from the tray, which tells you when a person is needed. "
    "Quit it from the tray's menu or with Ctrl+Q; turn hiding off in Engine ▸ Engine Settings…"
)


def _on(settings: Any, key: str, default: bool) -> bool:
    return settings.value(key, default) not in (False, "false", "0", 0)


def hide_on(settings: Any) -> bool:
    """Whether the close button hides the window while the engine runs (it does unless turned off)."""
    return _on(settings, HIDE_KEY, True)


def should_hide(settings: Any, tray: Any, engine_running: bool, quitting: bool) -> bool:
    """Whether closing the window hides it in the tray (see the module's text)."""
    return not quitting and engine_running and bool(getattr(tray, "available", False)) and hide_on(settings)


def hide(window: Any, settings: Any, tray: Any) -> None:
    """Hide ``window`` in the tray, saying so the first time."""
    window.hide()
    if not _on(settings, SAID_KEY, False):
        tray.say(SAID_TITLE, SAID_TEXT)
        settings.setValue(SAID_KEY, True)
        settings.sync()


def show_again(window: Any, view: str = "attention") -> None:
    """Bring ``window`` back from the tray (or from minimized) on ``view``, in front."""
    window.show_view(view)
    window.showNormal()
    window.raise_()
    window.activateWindow()
