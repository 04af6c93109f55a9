"""What the ledger lets this window do, shown on the window: every action its role may not take
disabled with the reason, and one banner saying the window is read-only, and why.

The rights are read off the GUI thread when the ledger opens (and again when it
reconnects): :func:`core.ledger.rights.ledger_rights`, kept in
``AppContext.rights``. :data:`ACTION_ACTS` names the act each of the window's
actions asks the ledger for; an attention card's decisions are ``Act.DECIDE``
(:mod:`scheduler_gui.monitor.attention`). A write that reaches the database
anyway (rights taken away since) is refused in one line, in schedctl's words
(``LedgerUnavailable.refused``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QMenu, QWidget

from scheduler_gui.a11y import accessible
from scheduler_gui.status_style import look

if TYPE_CHECKING:
    from core.ledger.rights import LedgerRights
    from scheduler_gui.actions import Actions

#: Each of the window's actions that writes to the ledger, and the act it needs (core.ledger.rights.Act).
ACTION_ACTS = {
    "publish": "publish",
    "pause_schedule": "gate",
    "resume_schedule": "gate",
    "disable_schedule": "gate",
    "run_now": "run now",
    "backfill": "backfill",
    "engine_toggle": "engine",
    "engine_autostart": "engine",
}


def refusal(rights: LedgerRights | None, act: str) -> str | None:
    """Why ``rights`` refuse ``act`` (an :class:`~core.ledger.rights.Act` value), else None."""
    if rights is None:
        return None
    from core.ledger.rights import Act  # loaded already: the rights came from the ledger

    return rights.refusal(Act(act))


def refused_actions(rights: LedgerRights | None) -> dict[str, str]:
    """The window's actions (names in :class:`~scheduler_gui.actions.Actions`) ``rights`` refuse, with why."""
    refused = {name: refusal(rights, act) for name, act in ACTION_ACTS.items()}
    return {name: why for name, why in refused.items() if why is not None}


def with_rights(gate: Mapping[str, str | None], rights: LedgerRights | None) -> dict[str, str | None]:
    """``gate`` (action name -> why it is off, or None) with what ``rights`` refuse put first:
    a role that may not take an action is told so, whatever the schedule's state."""
    refused = refused_actions(rights)
    return {name: refused.get(name, reason) for name, reason in gate.items()}


def disable(act: QAction, reason: str) -> None:
    """Turn ``act`` off, saying why in its tooltip, its status tip and for its keys (DisabledKeys)."""
    act.setEnabled(False)
    act.setProperty("disabledReason", reason)
    act.setToolTip(reason)
    act.setStatusTip(reason)


class RightsBanner(QLabel):
    """One line above the views while the ledger refuses this window something: what, and why."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rightsBanner")
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setContentsMargins(10, 6, 10, 6)
        colour = look("UNKNOWN_EFFECT").colour
        self.setStyleSheet(f"#rightsBanner {{ border: 1px solid {colour}; border-radius: 4px; margin: 4px; }}")
        accessible(self, "Read-only", "What this window may not change in the ledger, and why")
        self.hide()

    def show_rights(self, rights: LedgerRights | None) -> None:
        summary = rights.summary if rights is not None else None
        self.setVisible(summary is not None)
        if summary is None:
            self.setText("")
            return
        from core.ledger.rights import Act

        if rights is not None and rights.read_only is None:  # read-only says so itself
            what = "No engine in this window" if rights.may(Act.PUBLISH) else "This window may not publish"
            summary = f"{what}: {summary[:1].lower()}{summary[1:]}"
        self.setText(summary)
        self.setAccessibleName(summary)


def show_engine_refusal(acts: Actions, reason: str | None) -> None:
    """The Engine menu's first line says why this window runs no engine (hidden when it may)."""
    menu = next((m for m in acts.engine_toggle.associatedObjects() if isinstance(m, QMenu)), None)
    if menu is None:
        return
    note = menu.findChild(QAction, "engineRefused")
    if note is None:
        note = QAction(menu)
        note.setObjectName("engineRefused")
        note.setEnabled(False)
        menu.insertAction(acts.engine_toggle, note)
        menu.setToolTipsVisible(True)
    note.setText(f"No engine here: {reason}" if reason else "")
    note.setToolTip(reason or "")
    note.setVisible(reason is not None)
    if reason is not None:
        for name in ("engine_toggle", "engine_autostart"):
            disable(getattr(acts, name), reason)
    elif not acts.engine_autostart.isEnabled():
        acts.engine_autostart.setEnabled(True)
        acts.engine_autostart.setToolTip(str(acts.engine_autostart.property("defaultTip")))
        acts.engine_autostart.setStatusTip(str(acts.engine_autostart.property("defaultTip")))
