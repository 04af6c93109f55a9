"""Wake alarms on macOS with ``pmset schedule wake "MM/dd/yy HH:mm:ss"`` (local time).

``pmset schedule`` needs administrator rights, so it is offered only to an
engine running as root (:mod:`core.desktop.wake.probe`). pmset's events carry no name
of ours: this backend remembers which time it set for which schedule, cancels
that one (``pmset schedule cancel wake ...``), and lists what ``pmset -g sched``
says, naming the schedule where the time is one it set.
"""

from __future__ import annotations

import re
from datetime import datetime

from core.desktop.service_command import Runner
from core.desktop.wake.alarms import Alarm, WakeError

_SCHED = re.compile(r"wake(?:poweron)? at (\d{2}/\d{2}/\d{2,4} \d{2}:\d{2}:\d{2})")


def stamp(at: datetime) -> str:
    """``12/07/26 08:59:30``: pmset's form, in this machine's local time."""
    return at.astimezone().strftime("%m/%d/%y %H:%M:%S")


class PmsetWakes:
    """Arms one ``pmset schedule wake`` event per schedule through ``runner``."""

    name = "pmset"
    cannot: str | None = None

    def __init__(self, runner: Runner) -> None:
        self._run = runner
        self._set: dict[str, str] = {}

    def arm(self, schedule_id: str, at: datetime) -> None:
        self.disarm(schedule_id)
        when = stamp(at)
        ran = self._run(["pmset", "schedule", "wake", when])
        if ran.returncode != 0:
            raise WakeError(f"pmset could not schedule the wake of {schedule_id}: {(ran.stderr or ran.stdout).strip()}")
        self._set[schedule_id] = when

    def disarm(self, schedule_id: str) -> None:
        when = self._set.pop(schedule_id, None)
        if when is not None:
            self._run(["pmset", "schedule", "cancel", "wake", when])

    def listing(self) -> list[Alarm]:
        ran = self._run(["pmset", "-g", "sched"])
        if ran.returncode != 0:
            raise WakeError(f"pmset could not list its wake events: {(ran.stderr or ran.stdout).strip()}")
        owners = {when: sid for sid, when in self._set.items()}
        alarms = []
        for text in _SCHED.findall(ran.stdout):
            local = datetime.strptime(text, "%m/%d/%y %H:%M:%S").astimezone()
            sid = owners.get(text)
            alarms.append(Alarm(sid, local, f"pmset {text}"))
        return sorted(alarms, key=lambda a: a.at)
