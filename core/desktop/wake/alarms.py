"""What a wake backend is: arm, disarm and list one alarm per schedule.

A backend's listing is the truth about which alarms are armed: the engine reads
it when it starts and the window's Engines view shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

#: How long before a run its alarm wakes the machine: time for the machine to
#: resume, its network to come back and the engine's next pass to see the run due.
LEAD = timedelta(seconds=30)
#: The prefix of every alarm's name; the rest is the schedule id.
PREFIX = "tidemark-wake-"
#: Seconds any one OS call may take before it is given up (a pass never waits longer).
CALL_TIMEOUT = 10.0


def alarm_name(schedule_id: str) -> str:
    """``tidemark-wake-<scheduleId>``: schedule ids are valid unit names as they are."""
    return f"{PREFIX}{schedule_id}"


def wake_at(due: datetime) -> datetime:
    """When the machine is woken for a run due at ``due``."""
    return due - LEAD


@dataclass(frozen=True)
class Alarm:
    """One armed alarm: the schedule it is for (None when the OS does not say) and when it fires (UTC)."""

    schedule_id: str | None
    at: datetime
    name: str


class WakeError(Exception):
    """An OS call to arm, disarm or list alarms failed; the message says what it answered."""


class WakeBackend(Protocol):
    """Arms alarms that wake the machine, or says why it cannot."""

    @property
    def name(self) -> str:
        """What it uses, in words: ``systemd user timer``, ``pmset``."""
        ...

    @property
    def cannot(self) -> str | None:
        """Why this machine cannot be woken for runs, or None when it can."""
        ...

    def arm(self, schedule_id: str, at: datetime) -> None:
        """Set the schedule's one alarm to fire at ``at`` (replacing one already set)."""
        ...

    def disarm(self, schedule_id: str) -> None:
        """Remove the schedule's alarm, if there is one."""
        ...

    def listing(self) -> list[Alarm]:
        """The alarms armed now, as the OS lists them."""
        ...


@dataclass(frozen=True)
class CannotWake:
    """A machine that cannot be woken: it carries the reason, and arms nothing."""

    reason: str
    name: str = "none"

    @property
    def cannot(self) -> str | None:
        return self.reason

    def arm(self, schedule_id: str, at: datetime) -> None:
        """Nothing: the schedule runs by its misfire policy when the machine wakes."""

    def disarm(self, schedule_id: str) -> None:
        """Nothing was armed."""

    def listing(self) -> list[Alarm]:
        return []


def cannot_line(reason: str) -> str:
    """The one line the designer and ``schedctl explain`` say on a machine that cannot wake."""
    return f"This machine cannot be woken for runs: {reason}; missed runs follow the misfire policy."


def wake_line(backend: WakeBackend | None) -> str:
    """What ``wakeSystem: true`` does on this machine, in one line (``backend``: this host's;
    None when it is not known, e.g. for a spec read away from any engine)."""
    if backend is None:
        return f"It asks to wake its machine {_lead_words()} before each run."
    if backend.cannot is not None:
        return cannot_line(backend.cannot)
    return f"It wakes this machine {_lead_words()} before each run ({backend.name})."


def _lead_words() -> str:
    return f"{int(LEAD.total_seconds())} seconds"
