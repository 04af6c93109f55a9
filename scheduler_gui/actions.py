"""The window's actions (menu items, toolbar buttons, shortcuts) and its menus.

Each action is made once here, with its shortcut, tooltip and icon; the main
window connects them. Keeping them in one place keeps the menus, the toolbar
and the keyboard in agreement.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from PySide6.QtCore import QObject, QSize, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QToolBar

from scheduler_gui.icons import icon


def _action(
    parent: QObject,
    text: str,
    tip: str,
    shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
    icon_: str | None = None,
) -> QAction:
    act = QAction(text, parent)
    if shortcut is not None:
        act.setShortcut(QKeySequence(shortcut))
    label = text.replace("&", "").rstrip("…")
    keys = act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
    act.setToolTip(f"{tip} ({keys})" if keys else tip)
    act.setStatusTip(tip)
    act.setWhatsThis(tip)
    act.setIconText(label)
    if icon_ is not None:
        act.setProperty("iconName", icon_)
        act.setIcon(icon(icon_))
    return act


def refresh_icons(acts: Actions) -> None:
    """Draw the icons again in the palette's colours (after a switch between light and dark)."""
    for act in acts.all():
        name = act.property("iconName")
        if name:
            act.setIcon(icon(str(name)))


@dataclass
class Actions:
    new: QAction
    new_from_template: QAction
    open: QAction
    save: QAction
    save_as: QAction
    quit: QAction
    undo: QAction
    redo: QAction
    filter: QAction
    refresh: QAction
    view_designer: QAction
    view_occurrences: QAction
    view_attention: QAction
    view_health: QAction
    view_schedules: QAction
    publish: QAction
    pause_schedule: QAction
    resume_schedule: QAction
    disable_schedule: QAction
    run_now: QAction
    backfill: QAction
    engine_toggle: QAction
    engine_autostart: QAction
    about: QAction

    def all(self) -> list[QAction]:
        return [getattr(self, f.name) for f in fields(self)]


def build_actions(parent: QObject) -> Actions:
    seq = QKeySequence.StandardKey
    acts = Actions(
        new=_action(parent, "&New", "Start a new schedule (daily at 09:00 in this computer's zone)", seq.New, "new"),
        new_from_template=_action(parent, "New from &Template…", "Start from one of the demo schedules"),
        open=_action(parent, "&Open…", "Open a schedule file", seq.Open, "open"),
        save=_action(parent, "&Save", "Save the schedule", seq.Save, "save"),
        save_as=_action(parent, "Save &As…", "Save the schedule to another file", "Ctrl+Shift+S"),
        quit=_action(parent, "&Quit", "Close Tidemark", seq.Quit),
        undo=_action(parent, "&Undo", "Undo the last edit", "Ctrl+Z"),
        redo=_action(parent, "&Redo", "Redo the edit just undone", "Ctrl+Shift+Z"),
        filter=_action(
            parent, "&Filter Occurrences…", "Filter the occurrences by schedule, state, time or text", "Ctrl+F"
        ),
        refresh=_action(parent, "&Refresh", "Reload the workspace, the preview and the ledger views", "F5"),
        view_designer=_action(parent, "&Designer", "Show the schedule designer and its preview", "Ctrl+1"),
        view_occurrences=_action(parent, "&Occurrences", "Show every occurrence in the ledger", "Ctrl+2"),
        view_attention=_action(parent, "&Attention", "Show the occurrences that need a decision", "Ctrl+3"),
        view_health=_action(parent, "&Health", "Show the engine's health charts", "Ctrl+4"),
        view_schedules=_action(
            parent, "&Schedules", "Show every published schedule with its state and next run", "Ctrl+5"
        ),
        publish=_action(
            parent,
            "&Publish…",
            "Publish this schedule as its next revision, after seeing what changes",
            "Ctrl+Return",
            "publish",
        ),
        pause_schedule=_action(
            parent, "&Pause Schedule…", "Stop dispatching this schedule until resumed", None, "pause"
        ),
        resume_schedule=_action(parent, "&Resume Schedule", "Dispatch this schedule again"),
        disable_schedule=_action(parent, "&Disable Schedule…", "Stop materializing and dispatching this schedule"),
        run_now=_action(parent, "Run &Now…", "Run this schedule's task once now, as a manual occurrence", None, "run"),
        backfill=_action(parent, "&Backfill…", "Run the occurrences of a past range, recorded as a backfill"),
        engine_toggle=_action(parent, "Start &Engine", "Start or pause the embedded engine", None, "engine"),
        engine_autostart=_action(
            parent, "Start the Engine &with the App", "Start the embedded engine when Tidemark opens"
        ),
        about=_action(parent, "&About Tidemark", "Version, time zone data and ledger in use"),
    )
    acts.engine_autostart.setCheckable(True)
    # A second binding for Ctrl+Enter on the keypad.
    acts.publish.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
    for act in (acts.view_designer, acts.view_occurrences, acts.view_attention, acts.view_health, acts.view_schedules):
        act.setCheckable(True)
    return acts


def build_menus(window: QMainWindow, acts: Actions, recent_menu: QMenu) -> None:
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.addActions([acts.new, acts.new_from_template, acts.open])
    file_menu.addMenu(recent_menu)
    file_menu.addSeparator()
    file_menu.addActions([acts.save, acts.save_as])
    file_menu.addSeparator()
    file_menu.addAction(acts.quit)

    edit_menu = bar.addMenu("&Edit")
    edit_menu.addActions([acts.undo, acts.redo])
    edit_menu.addSeparator()
    edit_menu.addAction(acts.filter)

    view_menu = bar.addMenu("&View")
    view_menu.addActions(
        [acts.view_designer, acts.view_occurrences, acts.view_attention, acts.view_health, acts.view_schedules]
    )
    view_menu.addSeparator()
    view_menu.addAction(acts.refresh)

    schedule_menu = bar.addMenu("&Schedule")
    schedule_menu.addAction(acts.publish)
    schedule_menu.addSeparator()
    schedule_menu.addActions([acts.pause_schedule, acts.resume_schedule, acts.disable_schedule])
    schedule_menu.addSeparator()
    schedule_menu.addActions([acts.run_now, acts.backfill])

    engine_menu = bar.addMenu("E&ngine")
    engine_menu.addActions([acts.engine_toggle, acts.engine_autostart])

    help_menu = bar.addMenu("&Help")
    help_menu.addAction(acts.about)


def build_toolbar(window: QMainWindow, acts: Actions) -> QToolBar:
    bar = QToolBar("Main", window)
    bar.setObjectName("mainToolBar")
    bar.setAccessibleName("Main toolbar")
    bar.setMovable(False)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)  # words, not riddles
    bar.setIconSize(QSize(20, 20))
    bar.addActions([acts.new, acts.open, acts.save])
    bar.addSeparator()
    bar.addActions([acts.publish, acts.pause_schedule, acts.run_now])
    window.addToolBar(bar)
    return bar
