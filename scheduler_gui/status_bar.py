"""What the window says about the engine and the ledger: the engine's state
beside its toolbar button, and in the status bar the engine, the next due
occurrence, the ledger's location, the tzdata version and the counts."""

from __future__ import annotations

from datetime import datetime
from pathlib import PurePath
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QFontDatabase
from PySide6.QtWidgets import QMainWindow, QSizePolicy, QToolBar

from core.time.zones import tzdb_version
from scheduler_gui.a11y import accessible, explain
from scheduler_gui.actions import keys_text
from scheduler_gui.elide import WholeWordsLabel
from scheduler_gui.monitor.states import EngineState, HubState
from scheduler_gui.workspace.sidebar import fmt_next

if TYPE_CHECKING:
    from scheduler_gui.monitor.hub import MonitorHub

#: The engine's states (``EngineHost.state``, and the hub's own before there is an engine) in words.
ENGINE_WORDS = {
    EngineState.RUNNING: "● running",
    EngineState.PAUSED: "◐ paused",
    EngineState.STOPPED: "○ stopped",
    EngineState.OFF: "○ off",
    EngineState.WAITING: "○ waiting for the ledger…",
    EngineState.UNAVAILABLE: "○ not available",
    EngineState.OTHER_ENGINE: "◎ another engine dispatches",
    EngineState.ERROR: "⚠ error",
}


class StatusLabel(WholeWordsLabel):
    """A label in tabular digits whose accessible name is what it shows ("Engine ● running · next …"),
    or ``title`` while it shows nothing: a screen reader reads the state, not a fixed caption.

    In a narrow window it gives up room down to its first word: it then shows the words that fit and
    "…" (whole words only); :meth:`text` and the accessible name stay the whole text."""

    def __init__(self, name: str, title: str, tip: str) -> None:
        super().__init__()
        self.setObjectName(name)
        self._title = title
        accessible(self, title, tip)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setContentsMargins(6, 0, 6, 0)

    def setText(self, text: str) -> None:
        self.setAccessibleName(text or self._title)
        super().setText(text)


def status_label(name: str, title: str, tip: str) -> StatusLabel:
    """A :class:`StatusLabel` named ``name`` (its object name), ``title`` while empty, saying ``tip``."""
    return StatusLabel(name, title, tip)


def next_due(hub: MonitorHub) -> tuple[datetime | None, str | None, str]:
    """The next due instant, its schedule and that schedule's zone: the engine's outlook, else the summaries."""
    engine = hub.engine
    when = getattr(engine, "next_due", None) if engine is not None else None
    sid = getattr(engine, "next_due_schedule", None) if engine is not None else None
    if when is None:
        nxt = hub.next_due()
        if nxt is None or nxt.next_due_at is None:
            return None, None, "UTC"
        when, sid = nxt.next_due_at, nxt.schedule_id
    zone = next((s.time_zone for s in hub.summaries if s.schedule_id == sid), "UTC")
    return when, sid, zone


def short_where(where: str) -> str:
    """``ledger.db`` for ``/home/alice/.local/share/tidemark/ledger.db``; ``alice@db/tidemark`` for
    ``postgresql+psycopg://alice@db/tidemark``."""
    if "://" in where:
        return where.split("://", 1)[1]
    return PurePath(where).name or where


class StatusLine:
    """The labels; :meth:`show_engine`, :meth:`show_counts` and the ledger methods fill them in."""

    def __init__(self, window: QMainWindow, toolbar: QToolBar) -> None:
        self.engine_label = status_label(
            "engineState", "Engine", "The embedded engine's state and its next due occurrence"
        )
        toolbar.addWidget(self.engine_label)
        self.engine_status = status_label("engineStatus", "Engine", "The embedded engine's state")
        self.next_label = status_label(
            "nextDue", "Next due", "The next occurrence due, in its schedule's zone and in UTC"
        )
        self.ledger_label = status_label("ledgerLocation", "Ledger", "Where the ledger is")
        self.tzdata_label = status_label(
            "tzdataVersion", "Time zone data", "The time zone data every time is computed with"
        )
        self.counts_label = status_label(
            "ledgerCounts", "Counts", "Occurrences due now, and those that need a decision"
        )
        self.tzdata_label.setText(f"tzdata {tzdb_version()}")
        self.show_opening()
        bar = window.statusBar()
        for label in (self.engine_status, self.next_label, self.ledger_label, self.tzdata_label, self.counts_label):
            if label is not self.next_label:  # short: whole, always; the next run gives up words when narrow
                label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
            bar.addPermanentWidget(label)
        bar.setAccessibleName("Status bar")

    def show_opening(self) -> None:
        self.ledger_label.setText("Ledger: opening…")
        explain(self.ledger_label, "The ledger is being opened")

    def show_ledger(self, where: str) -> None:
        """The ledger's short name in the bar (a file's name, a server's user@host/database),
        all of it in the tooltip: a long path would push the other labels out of sight."""
        self.ledger_label.setText(f"Ledger {short_where(where)}")
        explain(self.ledger_label, f"The ledger in use: {where}")

    def show_ledger_failed(self, message: str) -> None:
        self.ledger_label.setText("Ledger ⚠ cannot be used")
        explain(self.ledger_label, message)

    def show_engine(self, hub: MonitorHub, toggle: QAction) -> None:
        """The engine's state and next due occurrence, and the toggle's words to match."""
        state = hub.engine_state
        word = ENGINE_WORDS[state]
        when, sid, zone = next_due(hub)
        compact = f" · next {fmt_next(when, zone, compact=True)}" if when is not None else ""
        self.engine_label.setText(f"Engine {word}{compact}")
        self.engine_status.setText(f"Engine {word}")
        if when is not None:
            self.next_label.setText(f"Next {sid}: {fmt_next(when, zone)}")
        else:
            self.next_label.setText("Nothing due" if hub.state is HubState.OPEN else "")
        engine = hub.engine
        toggle.setEnabled(engine is not None)
        toggle.setText("Pause &Engine" if state is EngineState.RUNNING else "Start &Engine")
        toggle.setIconText("Pause engine" if state is EngineState.RUNNING else "Start engine")
        if engine is None:
            tip = "The embedded engine is not available" + (f": {hub.error}" if hub.error else "")
        elif state is EngineState.RUNNING:
            tip = "Pause the embedded engine: running tasks finish, nothing new starts"
        else:
            tip = "Start the embedded engine"
            other = engine.describe_other() if hasattr(engine, "describe_other") else None
            if other:
                tip += f" ({other})"
            if state is EngineState.ERROR and getattr(engine, "last_error", None):
                tip += f"; last error: {engine.last_error}"
        keys = keys_text(toggle)
        toggle.setToolTip(f"{tip} ({keys})" if keys else tip)
        explain(self.engine_label, tip)
        explain(self.engine_status, tip)

    def show_counts(self, hub: MonitorHub) -> None:
        if hub.state is not HubState.OPEN:
            self.counts_label.setText("")
            return
        self.counts_label.setText(f"{hub.count('DUE'):,} due · {hub.attention:,} need attention")
