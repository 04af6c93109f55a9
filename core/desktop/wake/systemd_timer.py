"""Wake alarms as transient systemd *user* timers with ``WakeSystem=true``.

Arming runs ``systemd-run --user --unit=tidemark-wake-<scheduleId>
--on-calendar='YYYY-MM-DD HH:MM:SS UTC' --timer-property=WakeSystem=true
--timer-property=AccuracySec=1s --timer-property=RemainAfterElapse=no --collect
/bin/true``: the timer wakes the machine, runs nothing of note and goes away. The
engine itself runs the schedule once awake. Disarming stops the timer; the
listing is ``systemctl --user list-timers 'tidemark-wake-*' --all --output=json``.
A user manager needs CAP_WAKE_ALARM for ``WakeSystem=``, which systemd grants it
by default from version 254.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from core.desktop.service_command import Ran, Runner
from core.desktop.wake.alarms import PREFIX, Alarm, WakeError, alarm_name

#: The first systemd whose user manager may set ``WakeSystem=`` by default.
FIRST_WAKING_VERSION = 254


def calendar(at: datetime) -> str:
    """``2026-12-07 13:59:30 UTC``: an OnCalendar= instant, whole seconds."""
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _said(ran: Ran) -> str:
    return (ran.stderr or ran.stdout).strip().splitlines()[0] if (ran.stderr or ran.stdout).strip() else ""


class SystemdTimers:
    """Arms one transient user timer per schedule through ``runner``."""

    name = "systemd user timer"
    cannot: str | None = None

    def __init__(self, runner: Runner) -> None:
        self._run = runner

    def arm(self, schedule_id: str, at: datetime) -> None:
        self.disarm(schedule_id)  # systemd-run refuses a unit name in use
        ran = self._run(
            [
                "systemd-run",
                "--user",
                f"--unit={alarm_name(schedule_id)}",
                f"--on-calendar={calendar(at)}",
                "--timer-property=WakeSystem=true",
                "--timer-property=AccuracySec=1s",
                "--timer-property=RemainAfterElapse=no",
                "--collect",
                "--quiet",
                "/bin/true",
            ]
        )
        if ran.returncode != 0:
            raise WakeError(f"systemd-run could not set the wake timer of {schedule_id}: {_said(ran)}")

    def disarm(self, schedule_id: str) -> None:
        unit = alarm_name(schedule_id)
        self._run(["systemctl", "--user", "stop", f"{unit}.timer"])
        self._run(["systemctl", "--user", "reset-failed", f"{unit}.timer", f"{unit}.service"])

    def listing(self) -> list[Alarm]:
        ran = self._run(["systemctl", "--user", "list-timers", f"{PREFIX}*", "--all", "--output=json"])
        if ran.returncode != 0:
            raise WakeError(f"systemctl could not list the wake timers: {_said(ran)}")
        return parse_listing(ran.stdout)


def parse_listing(text: str) -> list[Alarm]:
    """The alarms in ``list-timers --output=json``: its ``next`` is microseconds since the epoch."""
    try:
        rows: Any = json.loads(text or "[]")
    except ValueError as exc:
        raise WakeError(f"systemctl listed the wake timers in a form not understood: {exc}") from None
    alarms = []
    for row in rows if isinstance(rows, list) else []:
        unit = str(row.get("unit", "")) if isinstance(row, dict) else ""
        micros = row.get("next") if isinstance(row, dict) else None
        if not unit.startswith(PREFIX) or not isinstance(micros, int) or micros <= 0:
            continue  # elapsed, or not one of ours
        name = unit.removesuffix(".timer")
        at = datetime.fromtimestamp(micros // 1_000_000, UTC)
        alarms.append(Alarm(name.removeprefix(PREFIX), at, name))
    return sorted(alarms, key=lambda a: (a.at, a.name))
