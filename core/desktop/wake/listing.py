"""The armed alarms in words, for the window's Engines view: read from the backend's
listing (the truth), each at the machine's wall time with UTC beside it."""

from __future__ import annotations

from core.desktop.wake.alarms import WakeBackend, WakeError
from core.time.formats import fmt_utc
from core.time.zones import get_zone


def alarm_lines(backend: WakeBackend, zone_name: str) -> list[str]:
    """One line per armed alarm, soonest first; or one line saying why there is none. Never raises
    for the OS's answer: a listing that fails is said in its line."""
    if backend.cannot is not None:
        return [f"This computer cannot be woken for runs: {backend.cannot}."]
    try:
        alarms = backend.listing()
    except WakeError as exc:
        return [f"The wake alarms could not be read: {exc}."]
    if not alarms:
        return [f"No wake alarm is armed on this computer ({backend.name})."]
    zone = get_zone(zone_name)
    lines = []
    for alarm in alarms:
        local = alarm.at.astimezone(zone)
        whom = alarm.schedule_id if alarm.schedule_id is not None else alarm.name
        lines.append(
            f"Wakes this computer for {whom} at {local:%Y-%m-%d %H:%M:%S} {local.tzname()} ({fmt_utc(alarm.at)})"
        )
    return lines
