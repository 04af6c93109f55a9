"""A spec as a systemd timer and its service: the nearest equivalent, with a comment in the unit
file for every policy systemd cannot keep, or the reason there is none (:class:`ExportError`).

What systemd keeps exactly (and :mod:`core.importing.systemd` reads back): a calendar rule whose
parts systemd's calendar syntax holds, read on the spec's zone (``OnCalendar=... ZONE``),
``gapPolicy: SKIP`` and ``foldPolicy: FIRST_ONLY`` (what systemd does at a clock change),
``misfirePolicy`` SKIP (``Persistent=false``) or CATCH_UP_BOUNDED with ``maxCatchUp: 1``
(``Persistent=true``), ``overlapPolicy: SKIP`` (a running service is not started again), one
attempt, and the task's argv, env, cwd and timeout, each value written as systemd reads it back
(:mod:`core.exporting.unit_syntax`), or refused where no line of a unit can hold it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from core.enums import FoldPolicy, GapPolicy, InvalidDatePolicy, Kind, MisfirePolicy, OverlapPolicy, TzdbPolicy
from core.exporting.refusal import ExportRefused
from core.exporting.unit_syntax import assignment, command_line, directory, plain_value
from core.importing.systemd_calendar import weekday_text
from core.importing.systemd_unit import span_text
from core.spec.model import ScheduleSpec
from core.time.zones import get_zone

_WEEKDAYS = {"MO": 0, "TU": 1, "WE": 2, "TH": 3, "FR": 4, "SA": 5, "SU": 6}
_SUPPORTED = {"FREQ", "INTERVAL", "BYMONTH", "BYMONTHDAY", "BYDAY", "BYHOUR", "BYMINUTE", "BYSECOND", "WKST"}
_FREQS = ("MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY")


class ExportError(ExportRefused):
    """A spec with no systemd equivalent; the message says why."""


@dataclass
class SystemdUnits:
    """The two unit files, and what they could not keep (each also a comment in them)."""

    name: str
    timer: str
    service: str
    lost: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return not self.lost


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",")]


def _values(values: list[int]) -> str:
    return ",".join(f"{v:02d}" for v in sorted(set(values)))


def on_calendar(rule: str, start: datetime) -> str:
    """The calendar expression that names exactly the rule's wall-clock times from ``start`` on;
    an :class:`ExportError` says why there is none."""
    parts = dict(part.split("=", 1) for part in rule.split(";") if part)
    unknown = sorted(set(parts) - _SUPPORTED)
    if unknown:
        raise ExportError(f"the rule's {', '.join(unknown)} has no systemd equivalent")
    freq = parts.get("FREQ", "")
    if freq not in _FREQS:
        raise ExportError(f"FREQ={freq} has no systemd equivalent")
    interval = int(parts.get("INTERVAL", "1"))
    seconds = _ints(parts["BYSECOND"]) if "BYSECOND" in parts else [start.second]
    minutes: list[int] | None = _ints(parts["BYMINUTE"]) if "BYMINUTE" in parts else None
    hours: list[int] | None = _ints(parts["BYHOUR"]) if "BYHOUR" in parts else None
    if interval != 1:
        if freq == "MINUTELY" and 60 % interval == 0 and minutes is None:
            minutes = list(range(start.minute % interval, 60, interval))
        elif freq == "HOURLY" and 24 % interval == 0 and hours is None:
            hours = list(range(start.hour % interval, 24, interval))
        else:
            raise ExportError(
                f"FREQ={freq};INTERVAL={interval} counts from the start; systemd's calendar repeats only within "
                "a minute, an hour, a day, a month or a year"
            )
    if minutes is None and freq != "MINUTELY":
        minutes = [start.minute]
    if hours is None and freq not in ("MINUTELY", "HOURLY"):
        hours = [start.hour]
    weekdays: list[int] | None = None
    if "BYDAY" in parts:
        codes = parts["BYDAY"].split(",")
        if any(code not in _WEEKDAYS for code in codes):
            raise ExportError(f"BYDAY={parts['BYDAY']}: a numbered weekday (the 1st Monday) has no systemd equivalent")
        weekdays = sorted({_WEEKDAYS[code] for code in codes})
    elif freq == "WEEKLY":
        weekdays = [start.weekday()]
    months: list[int] | None = _ints(parts["BYMONTH"]) if "BYMONTH" in parts else None
    days: list[int] | None = _ints(parts["BYMONTHDAY"]) if "BYMONTHDAY" in parts else None
    if freq == "YEARLY" and months is None:
        months = [start.month]
    if freq in ("MONTHLY", "YEARLY") and days is None and weekdays is None:
        days = [start.day]
    day_text, sep = "*", "-"
    if days is not None:
        if all(d < 0 for d in days):
            day_text, sep = _values([-d for d in days]), "~"
        elif all(d > 0 for d in days):
            day_text = _values(days)
        else:
            raise ExportError("BYMONTHDAY counts days from both ends of the month; one systemd expression cannot")
    words = []
    if weekdays is not None and len(weekdays) < 7:
        words.append(weekday_text(frozenset(weekdays)))
    words.append(f"*-{_values(months) if months else '*'}{sep}{day_text}")
    words.append(
        f"{_values(hours) if hours is not None else '*'}:{_values(minutes) if minutes is not None else '*'}:"
        f"{_values(seconds)}"
    )
    return " ".join(words)


def _comments(lines: list[str]) -> list[str]:
    return [f"# {' '.join(line.split())}" for line in lines]


def _policies(spec: ScheduleSpec) -> list[str]:
    """What systemd cannot keep of the spec's policies, one sentence each."""
    lost = []
    if spec.kind is Kind.CALENDAR:
        if spec.effective_gap_policy is not GapPolicy.SKIP:
            lost.append(
                f"gapPolicy {spec.effective_gap_policy.value}: systemd does not run a time the clocks jump over"
            )
        if spec.effective_fold_policy is not FoldPolicy.FIRST_ONLY:
            lost.append(
                f"foldPolicy {spec.effective_fold_policy.value}: "
                "systemd runs a repeated time once, at its first reading"
            )
        if spec.invalid_date_policy is not InvalidDatePolicy.OMIT:
            lost.append(f"invalidDatePolicy {spec.invalid_date_policy.value}: systemd skips a date that does not exist")
    misfire = spec.misfire_policy
    if misfire is MisfirePolicy.CATCH_UP_ALL or (spec.effective_max_catch_up or 1) > 1:
        lost.append(f"misfirePolicy {misfire.value}: Persistent=true catches up one missed run, not more")
    if spec.overlap_policy is not OverlapPolicy.SKIP:
        lost.append(f"overlapPolicy {spec.overlap_policy.value}: systemd never starts a service that still runs")
    if spec.retry.max_attempts > 1:
        lost.append(f"retry maxAttempts {spec.retry.max_attempts}: a timer never runs a failed service again")
    if spec.exclude:
        lost.append("exclude: systemd has no excluded dates; disable the timer around them")
    if spec.business_calendar is not None and spec.holiday_policy is not None:
        lost.append(
            f"businessCalendar with holidayPolicy {spec.holiday_policy.value}: systemd knows no holidays "
            "or business days; runs on closed days happen as the rule says"
        )
    if spec.end is not None:
        lost.append(f"end {spec.end.isoformat()}: systemd has no end; disable the timer then")
    if spec.tzdb_policy is TzdbPolicy.PIN:
        lost.append("tzdbPolicy PIN: systemd follows the machine's installed tz database")
    if spec.runs_on is not None:
        lost.append("runsOn: install the units on the machine that should run them")
    if spec.alerts:
        lost.append("alerts: systemd tells no route; add OnFailure= to a unit that sends the alert")
    if spec.task is not None and spec.task.verify is not None:
        lost.append("task.verify: systemd runs no probe after the command")
    return lost


def export_systemd(spec: ScheduleSpec, now: datetime) -> SystemdUnits:
    """The timer and service nearest to ``spec``; an :class:`ExportError` where there is none."""
    if spec.task is None:
        raise ExportError("the spec has no task; a service must run a command")
    secrets = spec.task.secret_names()
    if secrets:
        names = ", ".join(sorted(secrets))
        raise ExportError(f"task.env {names} come from secrets; a unit file would hold their values in the clear")
    lost = _policies(spec)
    description = plain_value(spec.title or "", "title") or spec.schedule_id
    timer = [f"Description={description}"]
    notes: list[str] = []
    if spec.kind is Kind.CALENDAR:
        assert spec.rule is not None and spec.start is not None
        expression = on_calendar(spec.rule, spec.start)
        if spec.start > now.astimezone(get_zone(spec.time_zone)).replace(tzinfo=None):
            lost.append(f"start {spec.start.isoformat()}: systemd has no start; enable the timer then")
        timer_keys = [f"OnCalendar={expression} {spec.time_zone}"]
    elif spec.kind is Kind.INTERVAL:
        assert spec.every is not None
        lost.append(
            f"anchor {spec.anchor}: systemd counts OnUnitActiveSec= from the service's last start, "
            "and the first run from the timer's start"
        )
        timer_keys = ["OnActiveSec=0", f"OnUnitActiveSec={span_text(spec.every)}"]
    else:
        assert spec.delay is not None
        lost.append("start: systemd makes the first run when the timer starts")
        timer_keys = ["OnActiveSec=0", f"OnUnitInactiveSec={span_text(spec.delay)}"]
    persistent = spec.misfire_policy is not MisfirePolicy.SKIP
    timer_keys.append(f"Persistent={'true' if persistent else 'false'}")
    if spec.jitter > timedelta(0):
        timer_keys.append(f"RandomizedDelaySec={span_text(spec.jitter)}")
        notes.append("RandomizedDelaySec=: systemd draws a new delay each time; the spec's is fixed per occurrence")
    if spec.kind is Kind.CALENDAR:
        timer_keys.append("AccuracySec=1s")
        notes.append("AccuracySec=1s: systemd's default (1min) may run it up to a minute late")
    name = spec.schedule_id
    timer_text = "\n".join(
        [
            f"# Exported from the spec {spec.schedule_id} revision {spec.revision}",
            *_comments([f"not kept: {line}" for line in lost] + notes),
            "[Unit]",
            *timer,
            "",
            "[Timer]",
            *timer_keys,
            f"Unit={name}.service",
            "",
            "[Install]",
            "WantedBy=timers.target",
            "",
        ]
    )
    task = spec.task
    service = [
        "[Unit]",
        f"Description={description}",
        "",
        "[Service]",
        "Type=oneshot",
    ]
    for key, value in task.env.items():
        assert isinstance(value, str)
        service.append(f"Environment={assignment(key, value, f'task.env.{key}')}")
    if task.cwd is not None:
        service.append(f"WorkingDirectory={directory(task.cwd, 'task.cwd')}")
    service.append(f"TimeoutStartSec={span_text(task.timeout)}")
    service.append(f"ExecStart={command_line(task.argv, 'task.argv')}")
    service_text = "\n".join([f"# Exported from the spec {spec.schedule_id} revision {spec.revision}", *service, ""])
    return SystemdUnits(name, timer_text, service_text, lost)
