"""The words the window uses for the ledger's link and the embedded engine, member by member.

Plain enums, no Qt and no ledger: the status bar, the Engine menu and the
close sequence read them before the ledger's modules are loaded.
"""

from __future__ import annotations

from enum import StrEnum


class HubState(StrEnum):
    """Where the window's link to the ledger stands (:class:`~scheduler_gui.monitor.hub.MonitorHub`)."""

    CLOSED = "closed"
    """Not opened yet (the window opens it after its first paint)."""
    OPENING = "opening"
    """Being opened (and seeded) on a pool thread."""
    OPEN = "open"
    """Open: the monitor's views and the engine work on it."""
    FAILED = "failed"
    """It could not be used; the hub's ``error`` says why. F5 tries again."""


class EngineState(StrEnum):
    """Where the app's engine stands, as the status bar and the Engine menu show it."""

    STOPPED = "stopped"
    RUNNING = "running"
    PAUSED = "paused"
    OTHER_ENGINE = "other-engine"
    """Another engine runs on this ledger: this one watches it instead."""
    ERROR = "error"
    OFF = "off"
    """No engine: the ledger is not opened yet."""
    WAITING = "waiting"
    """No engine yet: the ledger is being opened."""
    UNAVAILABLE = "unavailable"
    """No engine: the ledger could not be used, or the engine could not be built."""


class ShutdownMode(StrEnum):
    """How the engine ends when the window closes (see ``EngineHost.shutdown``)."""

    DETACH = "detach"
    WAIT = "wait"
    STOP = "stop"
