"""The window's actions (menu items, toolbar buttons, shortcuts) and its menus.

Each action is made once here, with its shortcut, tooltip and icon; the main
window connects them. Keeping them in one place keeps the menus, the toolbar
and the keyboard in agreement.

Keys: the standard ones (Ctrl+N/O/S, Ctrl+I to import, Ctrl+Shift+S, Ctrl+Z, Ctrl+Shift+Z and
Ctrl+Y, Ctrl+F, F5, Ctrl+Enter to publish, Ctrl+Q, Ctrl+1…6 for the views)
and, for what acts on the ledger, Ctrl+Shift and a letter: Ctrl+Shift+R run
now, Ctrl+Shift+P pause or resume, Ctrl+Shift+E start or pause the engine.
Those avoid every key Qt binds on some platform (Ctrl+R is Refresh on macOS
and GNOME and Replace on KDE; Ctrl+P is Print; Ctrl+E moves to the line's end
in a text field on X11 and macOS).

The schedule actions work on the open document's schedule in the open ledger:
:func:`schedule_gate` says, for each, whether it can be used now and why not,
and :func:`apply_schedule_gate` enables them, moves the pause/resume key to
the one that applies and puts the reason in their tooltips. A key pressed
while its action is off says why in the status bar (:class:`DisabledKeys`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields

from PySide6.QtCore import QObject, QSize, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QMainWindow, QMenu, QToolBar, QToolButton, QWidget

from scheduler_gui.a11y import follow_action
from scheduler_gui.icons import icon

#: The one key for Pause and Resume: it belongs to whichever of the two applies.
GATE_KEY = "Ctrl+Shift+P"
#: Where a person publishes, in the window's own words.
PUBLISH_HINT = "Schedule ▸ Publish…, Ctrl+Enter"


def keys_text(act: QAction) -> str:
    """The action's keys as the menus write them: ``Ctrl+Shift+Z, Ctrl+Y``."""
    return ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in act.shortcuts() if not k.isEmpty())


def _set_tip(act: QAction, tip: str) -> None:
    keys = keys_text(act)
    act.setToolTip(f"{tip} ({keys})" if keys else tip)
    act.setStatusTip(tip)


def _action(
    parent: QObject,
    text: str,
    tip: str,
    shortcut: QKeySequence | QKeySequence.StandardKey | str | list[str] | None = None,
    icon_: str | None = None,
) -> QAction:
    act = QAction(text, parent)
    if isinstance(shortcut, list):
        act.setShortcuts([QKeySequence(k) for k in shortcut])
        # A menu writes only the first key; text after a tab is what it writes instead: all of them.
        act.setText(f"{text}\t{keys_text(act)}")
    elif shortcut is not None:
        act.setShortcut(QKeySequence(shortcut))
    label = text.replace("&", "").rstrip("…")
    act.setProperty("defaultTip", tip)
    _set_tip(act, tip)
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
    import_schedules: QAction
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
    view_engines: QAction
    publish: QAction
    pause_schedule: QAction
    resume_schedule: QAction
    disable_schedule: QAction
    run_now: QAction
    backfill: QAction
    engine_toggle: QAction
    engine_autostart: QAction
    session_start: QAction
    engine_settings: QAction
    about: QAction
    add_to_menu: QAction

    def all(self) -> list[QAction]:
        return [getattr(self, f.name) for f in fields(self)]


def build_actions(parent: QObject) -> Actions:
    seq = QKeySequence.StandardKey
    acts = Actions(
        new=_action(parent, "&New", "Start a new schedule (daily at 09:00 in the workspace's zone)", seq.New, "new"),
        new_from_template=_action(parent, "New from &Template…", "Start from one of the demo schedules"),
        open=_action(parent, "&Open…", "Open a schedule file", seq.Open, "open"),
        import_schedules=_action(
            parent,
            "&Import…",
            "Bring in the jobs of a crontab as schedules, each reviewed before it is saved",
            "Ctrl+I",
        ),
        save=_action(parent, "&Save", "Save the schedule", seq.Save, "save"),
        save_as=_action(parent, "Save &As…", "Save the schedule to another file", "Ctrl+Shift+S"),
        # Ctrl+Q by name: QKeySequence.Quit is empty on some platforms (Windows).
        quit=_action(parent, "&Quit", "Close Tidemark", "Ctrl+Q"),
        undo=_action(parent, "&Undo", "Undo the last edit", "Ctrl+Z"),
        redo=_action(parent, "&Redo", "Redo the edit just undone", ["Ctrl+Shift+Z", "Ctrl+Y"]),
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
        view_engines=_action(
            parent, "&Engines", "Show every engine seen on the ledger: labels, user, what it runs and refuses", "Ctrl+6"
        ),
        publish=_action(
            parent,
            "&Publish…",
            "Publish this schedule as its next revision, after seeing what changes",
            "Ctrl+Return",
            "publish",
        ),
        pause_schedule=_action(
            parent, "&Pause Schedule…", "Stop dispatching this schedule until resumed", GATE_KEY, "pause"
        ),
        resume_schedule=_action(parent, "&Resume Schedule…", "Dispatch this schedule again", None, "run"),
        disable_schedule=_action(parent, "&Disable Schedule…", "Stop materializing and dispatching this schedule"),
        run_now=_action(
            parent, "Run &Now…", "Run this schedule's task once now, as a manual occurrence", "Ctrl+Shift+R", "run"
        ),
        backfill=_action(parent, "&Backfill…", "Run the occurrences of a past range, recorded as a backfill"),
        engine_toggle=_action(parent, "Start &Engine", "Start or pause the embedded engine", "Ctrl+Shift+E", "engine"),
        engine_autostart=_action(
            parent, "Start the Engine &with the App", "Start the embedded engine when Tidemark opens"
        ),
        session_start=_action(
            parent, "Start with My Sess&ion", "Start Tidemark minimized, with its engine, when you log in"
        ),
        engine_settings=_action(
            parent, "Engine &Settings…", "The engine's labels and the users whose schedules it runs"
        ),
        about=_action(parent, "&About Tidemark", "Version, time zone data and ledger in use"),
        add_to_menu=_action(
            parent, "Add to Applications &Menu", "Add Tidemark's launcher and icon to this desktop's applications menu"
        ),
    )
    acts.engine_autostart.setCheckable(True)
    acts.session_start.setCheckable(True)
    # A second binding for Ctrl+Enter on the keypad.
    acts.publish.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
    for act in view_actions(acts):
        act.setCheckable(True)
    return acts


def view_actions(acts: Actions) -> list[QAction]:
    """The View menu's actions, in its order (Ctrl+1…6)."""
    return [
        acts.view_designer,
        acts.view_occurrences,
        acts.view_attention,
        acts.view_health,
        acts.view_schedules,
        acts.view_engines,
    ]


def build_menus(window: QMainWindow, acts: Actions, recent_menu: QMenu) -> None:
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.addActions([acts.new, acts.new_from_template, acts.open])
    file_menu.addMenu(recent_menu)
    file_menu.addAction(acts.import_schedules)
    file_menu.addSeparator()
    file_menu.addActions([acts.save, acts.save_as])
    file_menu.addSeparator()
    file_menu.addAction(acts.quit)

    edit_menu = bar.addMenu("&Edit")
    edit_menu.addActions([acts.undo, acts.redo])
    edit_menu.addSeparator()
    edit_menu.addAction(acts.filter)

    view_menu = bar.addMenu("&View")
    view_menu.addActions(view_actions(acts))
    view_menu.addSeparator()
    view_menu.addAction(acts.refresh)

    schedule_menu = bar.addMenu("&Schedule")
    schedule_menu.setToolTipsVisible(True)  # a greyed item says why on hover
    schedule_menu.addAction(acts.publish)
    schedule_menu.addSeparator()
    schedule_menu.addActions([acts.pause_schedule, acts.resume_schedule, acts.disable_schedule])
    schedule_menu.addSeparator()
    schedule_menu.addActions([acts.run_now, acts.backfill])

    engine_menu = bar.addMenu("E&ngine")
    engine_menu.addActions([acts.engine_toggle, acts.engine_autostart, acts.session_start])
    engine_menu.addSeparator()
    engine_menu.addAction(acts.engine_settings)

    help_menu = bar.addMenu("&Help")
    help_menu.addAction(acts.add_to_menu)
    help_menu.addSeparator()
    help_menu.addAction(acts.about)


def build_toolbar(window: QMainWindow, acts: Actions) -> QToolBar:
    bar = QToolBar("Main", window)
    bar.setObjectName("mainToolBar")
    bar.setAccessibleName("Main toolbar")
    bar.setMovable(False)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)  # words, not riddles
    bar.setIconSize(QSize(20, 20))
    for act in (acts.new, acts.open, acts.save):
        add_tool_action(bar, act)
    bar.addSeparator()
    add_tool_action(bar, acts.publish)
    # One button for Pause and Resume: it shows whichever applies (apply_schedule_gate).
    gate = QToolButton(bar)
    gate.setObjectName("scheduleGateButton")
    gate.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    gate.setAutoRaise(True)
    gate.setIconSize(bar.iconSize())
    gate.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # like the toolbar's other buttons: no Tab stop
    gate.setDefaultAction(acts.pause_schedule)
    follow_action(gate, acts.pause_schedule)
    follow_action(gate, acts.resume_schedule)
    bar.addWidget(gate)
    add_tool_action(bar, acts.run_now)
    window.addToolBar(bar)
    return bar


def add_tool_action(bar: QToolBar, act: QAction) -> None:
    """Put ``act`` on ``bar``; its button says what the action says (name, description)."""
    bar.addAction(act)
    button = bar.widgetForAction(act)
    if isinstance(button, QToolButton):
        follow_action(button, act)


# --- the schedule actions' gate ----------------------------------------------------------

#: The actions that work on the open document's schedule in the ledger.
SCHEDULE_ACTIONS = ("pause_schedule", "resume_schedule", "disable_schedule", "run_now", "backfill")


def schedule_gate(schedule_id: str | None, state: str | None, ledger_problem: str | None) -> dict[str, str | None]:
    """For each of SCHEDULE_ACTIONS, None when it can be used now, else why not, in the window's words.

    ``schedule_id`` is the open document's id (None: no document, or no id yet),
    ``state`` its schedule's state in the open ledger (``active``, ``paused``,
    ``disabled``; None: not published there), ``ledger_problem`` why the ledger
    cannot be used (None: it is open).
    """
    if ledger_problem is not None:
        return dict.fromkeys(SCHEDULE_ACTIONS, ledger_problem)
    if not schedule_id:
        return dict.fromkeys(SCHEDULE_ACTIONS, f"Open a schedule and publish it first ({PUBLISH_HINT})")
    sid = schedule_id
    if state is None:
        return dict.fromkeys(
            SCHEDULE_ACTIONS, f"Publish this schedule first ({PUBLISH_HINT}): {sid} is not in the ledger yet"
        )
    resume_first = f"{sid} is {state}: resume it first (Schedule ▸ Resume Schedule…, {GATE_KEY})"
    if state == "active":
        return {
            "pause_schedule": None,
            "resume_schedule": f"{sid} is active: there is nothing to resume",
            "disable_schedule": None,
            "run_now": None,
            "backfill": None,
        }
    return {
        "pause_schedule": f"{sid} is already paused" if state == "paused" else resume_first,
        "resume_schedule": None,
        "disable_schedule": f"{sid} is already disabled" if state == "disabled" else None,
        "run_now": resume_first,
        "backfill": resume_first,
    }


def apply_schedule_gate(acts: Actions, gate: Mapping[str, str | None], toolbar: QToolBar | None = None) -> None:
    """Enable the schedule actions as ``gate`` says, with the reason in the tooltip of each one
    that is off; the pause/resume key (and the toolbar's button) go to the one that applies."""
    resume = gate.get("resume_schedule") is None
    # The toolbar's button first: the actions' changes below then speak for the one it shows.
    button = toolbar.findChild(QToolButton, "scheduleGateButton") if toolbar is not None else None
    if button is not None:
        shown = acts.resume_schedule if resume else acts.pause_schedule
        if button.defaultAction() is not shown:
            button.setDefaultAction(shown)
    acts.pause_schedule.setShortcuts([] if resume else [QKeySequence(GATE_KEY)])
    acts.resume_schedule.setShortcuts([QKeySequence(GATE_KEY)] if resume else [])
    for name in SCHEDULE_ACTIONS:
        act: QAction = getattr(acts, name)
        reason = gate.get(name)
        act.setProperty("disabledReason", reason)
        _set_tip(act, reason if reason is not None else str(act.property("defaultTip")))
        act.setEnabled(reason is None)


class DisabledKeys(QObject):
    """Keys of actions that may be off: pressing one while its action is disabled says why
    (``say`` gets the action's reason) instead of doing nothing without a word.

    Each action gets a window shortcut for its keys, enabled only while the action is
    disabled, so it never competes with the action's own.
    """

    def __init__(self, window: QWidget, actions: Iterable[QAction], say: Callable[[str], None]) -> None:
        super().__init__(window)
        self._say = say
        self._keys: list[tuple[QAction, QShortcut]] = []
        for act in actions:
            key = QShortcut(window)
            key.setContext(Qt.ShortcutContext.WindowShortcut)
            key.activated.connect(lambda act=act: self._explain(act))
            self._keys.append((act, key))
            act.changed.connect(lambda act=act, key=key: self._follow(act, key))
            self._follow(act, key)

    @staticmethod
    def _follow(act: QAction, key: QShortcut) -> None:
        keys = [k for k in act.shortcuts() if not k.isEmpty()]
        if key.keys() != keys:
            key.setKeys(keys)
        key.setEnabled(bool(keys) and not act.isEnabled())

    def _explain(self, act: QAction) -> None:
        reason = act.property("disabledReason") or act.toolTip()
        self._say(f"{act.text().replace('&', '').rstrip('…')}: {reason}")
