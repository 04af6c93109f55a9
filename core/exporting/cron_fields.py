"""A spec's times as the five fields of a crontab line, or the reason cron cannot hold them.

A calendar rule is read as python-dateutil expands it (core.recurrence.rules): parts the rule
leaves out take the start's value (its minute and hour below HOURLY and MINUTELY, its weekday for
WEEKLY, its day for MONTHLY, its month and day for YEARLY). Each field is then the set of values
the rule allows; an INTERVAL becomes a cron step only where the step repeats every hour (minutes),
day (hours) or year (months), so that cron's restart of the step at each hour, day or year lands
on the rule's own values. An interval schedule counts elapsed time, so it is written for UTC.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from core.enums import Kind
from core.exporting.refusal import ExportRefused
from core.recurrence.rules import ParsedRule, number_runs, parse_rule
from core.spec.model import ScheduleSpec
from core.time.durations import format_duration

_WEEKDAY = {"SU": 0, "MO": 1, "TU": 2, "WE": 3, "TH": 4, "FR": 5, "SA": 6}
#: Each field's lowest and highest value.
_RANGE = {"minute": (0, 59), "hour": (0, 23), "day": (1, 31), "month": (1, 12), "weekday": (0, 6)}
_NOT_CRON = {
    "BYSETPOS": "BYSETPOS (the n-th of a set): cron has no positions",
    "BYWEEKNO": "BYWEEKNO (weeks of the year): cron has no week numbers",
    "BYYEARDAY": "BYYEARDAY (days of the year): cron has no day of the year",
}
_ORDER = ("minute", "hour", "day", "month", "weekday")


@dataclass(frozen=True)
class CronFields:
    """The values each of the five fields allows (weekdays 0 = Sunday), and how cron spells them."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]

    def texts(self) -> tuple[str, str, str, str, str]:
        values = (self.minutes, self.hours, self.days, self.months, self.weekdays)
        minute, hour, day, month, weekday = (field_text(v, *_RANGE[n]) for n, v in zip(_ORDER, values, strict=True))
        return minute, hour, day, month, weekday

    @property
    def expression(self) -> str:
        return " ".join(self.texts())

    @property
    def wildcard(self) -> bool:
        """Cron's wildcard job: the minute or the hour field starts with ``*``."""
        minute, hour, *_ = self.texts()
        return minute.startswith("*") or hour.startswith("*")


def field_text(values: frozenset[int], low: int, high: int) -> str:
    """One field: ``*`` for every value, ``*/N`` or ``A-B/N`` for a step, else ranges and values."""
    ordered = sorted(values)
    if ordered == list(range(low, high + 1)):
        return "*"
    if len(ordered) >= 3:
        step = ordered[1] - ordered[0]
        if step > 1 and ordered == list(range(ordered[0], high + 1, step)):
            return f"*/{step}" if ordered[0] == low else f"{ordered[0]}-{ordered[-1]}/{step}"
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in number_runs(ordered))


def _stepped(values: set[int], first: int, step: int, length: int, what: str) -> set[int]:
    if length % step:
        raise ExportRefused(f"{what}: cron's steps start again every {_UNIT[length]}, and {step} does not divide it")
    return {v for v in values if (v - first) % step == 0}


_UNIT = {60: "hour (60 minutes)", 24: "day (24 hours)", 12: "year (12 months)"}


def _all(name: str) -> set[int]:
    low, high = _RANGE[name]
    return set(range(low, high + 1))


def _checked_rule(parsed: ParsedRule) -> None:
    for part, why in _NOT_CRON.items():
        if part in parsed.parts:
            raise ExportRefused(why)
    if "BYSECOND" in parsed.parts and parsed.ints("BYSECOND") != [0]:
        raise ExportRefused("BYSECOND: cron runs at whole minutes only")
    if any(n < 0 for n in parsed.ints("BYMONTHDAY")):
        raise ExportRefused(
            "BYMONTHDAY counted from the month's end (-1 is the last day): cron counts from the 1st only"
        )
    if any(n is not None for n, _ in parsed.byday()):
        raise ExportRefused("a numbered weekday in BYDAY (2TU, -1FR): cron has no n-th weekday of a month")
    if parsed.parts.get("BYMONTHDAY") and parsed.parts.get("BYDAY"):
        raise ExportRefused(
            "BYMONTHDAY and BYDAY together (a day that is both): cron runs on a day that matches either"
        )
    interval = int(parsed.parts.get("INTERVAL", "1"))
    if interval > 1 and parsed.freq in ("DAILY", "WEEKLY", "YEARLY"):
        unit = {"DAILY": "days", "WEEKLY": "weeks", "YEARLY": "years"}[parsed.freq]
        raise ExportRefused(f"FREQ={parsed.freq};INTERVAL={interval} (every {interval} {unit}): cron has no such step")


def rule_fields(rule: str, start: datetime) -> CronFields:
    """The five fields of a calendar rule from ``start`` (wall time), or :class:`ExportRefused`."""
    parsed = parse_rule(rule)
    _checked_rule(parsed)
    if start.second:
        raise ExportRefused(f"the start {start:%H:%M:%S} has seconds: cron runs at whole minutes only")
    freq, interval = parsed.freq, int(parsed.parts.get("INTERVAL", "1"))
    hourly_in_minutes = freq == "MINUTELY" and interval % 60 == 0  # every N hours, written in minutes
    if hourly_in_minutes:
        freq, interval = "HOURLY", interval // 60
    days = set(parsed.ints("BYMONTHDAY"))
    weekdays = {_WEEKDAY[code] for _, code in parsed.byday()}
    months = set(parsed.ints("BYMONTH"))
    if not (days or weekdays):  # dateutil's defaults from the start
        if freq == "YEARLY":
            months = months or {start.month}
            days = {start.day}
        elif freq == "MONTHLY":
            days = {start.day}
        elif freq == "WEEKLY":
            weekdays = {(start.weekday() + 1) % 7}
    hours = set(parsed.ints("BYHOUR")) or (_all("hour") if freq in ("HOURLY", "MINUTELY") else {start.hour})
    minutes = set(parsed.ints("BYMINUTE")) or (_all("minute") if freq == "MINUTELY" else {start.minute})
    if hourly_in_minutes:
        minutes &= {start.minute}
    what = f"FREQ={parsed.freq};INTERVAL={parsed.parts.get('INTERVAL')}"
    if interval > 1 and freq == "MINUTELY":
        minutes = _stepped(minutes, start.minute, interval, 60, what)
    elif interval > 1 and freq == "HOURLY":
        hours = _stepped(hours, start.hour, interval, 24, what)
    elif interval > 1 and freq == "MONTHLY":
        months = _stepped(months or _all("month"), start.month, interval, 12, what)
    if not (minutes and hours and (months or not parsed.parts.get("BYMONTH"))):
        raise ExportRefused(f"{what}: the step never meets the rule's own values, so it never runs")
    return CronFields(
        frozenset(minutes),
        frozenset(hours),
        frozenset(days or _all("day")),
        frozenset(months or _all("month")),
        frozenset(weekdays or _all("weekday")),
    )


_INTERVAL_REFUSED = "an interval with an anchor that cron cannot express"


def interval_fields(every: timedelta, anchor: datetime) -> CronFields:
    """The five fields (in UTC) of ``anchor + k * every``, or :class:`ExportRefused` with the reason."""
    seconds = int(every.total_seconds())
    if anchor.second:
        raise ExportRefused(
            f"{_INTERVAL_REFUSED}: the anchor {anchor:%H:%M:%S}Z has seconds; cron runs at whole minutes"
        )
    if seconds % 60:
        raise ExportRefused(f"{_INTERVAL_REFUSED}: every {format_duration(every)} is not whole minutes")
    minutes = seconds // 60
    if 60 % minutes == 0:
        return CronFields(
            frozenset(range(anchor.minute % minutes, 60, minutes)),
            frozenset(_all("hour")),
            frozenset(_all("day")),
            frozenset(_all("month")),
            frozenset(_all("weekday")),
        )
    if minutes % 60 == 0 and 24 % (minutes // 60) == 0:
        hours = minutes // 60
        return CronFields(
            frozenset({anchor.minute}),
            frozenset(range(anchor.hour % hours, 24, hours)),
            frozenset(_all("day")),
            frozenset(_all("month")),
            frozenset(_all("weekday")),
        )
    raise ExportRefused(
        f"{_INTERVAL_REFUSED}: every {format_duration(every)} neither divides an hour nor is whole hours "
        "dividing a day, and cron's steps start again every hour and every day"
    )


def spec_fields(spec: ScheduleSpec) -> CronFields:
    """The five fields of a calendar or interval spec; an after-completion spec is refused."""
    if spec.kind is Kind.AFTER_COMPLETION:
        raise ExportRefused("an after_completion schedule waits for the last run to end: cron runs by the clock only")
    if spec.kind is Kind.INTERVAL:
        assert spec.every is not None and spec.anchor is not None
        return interval_fields(spec.every, spec.anchor)
    assert spec.rule is not None and spec.start is not None
    return rule_fields(spec.rule, spec.start)
