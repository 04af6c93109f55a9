"""The five time fields of a crontab job: what they mean, and the RFC 5545 rules that hold them.

The meaning is Debian cron's (``entry.c``): a field is a list of ``N``, ``N-M`` or ``*``, each of
the last two with an optional ``/STEP``; months and weekdays also by name (``jan``, ``mon-fri``);
weekday 7 is Sunday. When the day of the month and the day of the week are both restricted, a
day matching EITHER runs the job; when either field starts with ``*`` (``*/2`` too), a day must
match both. A job whose minute or hour field starts with ``*`` is a *wildcard* job: at a clock
change cron treats it apart from a fixed-time one (:mod:`core.importing.cron`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from core.importing.crontab_file import CrontabError

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
#: Each field: its name, lowest and highest value, and the names it takes (value = lowest + index).
_FIELDS = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _WEEKDAYS),
)
#: RFC 5545 weekday codes by cron's numbering (0 and 7 are Sunday).
_CODES = ("SU", "MO", "TU", "WE", "TH", "FR", "SA")
_RFC_ORDER = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
#: The longest each month can be (February in a leap year).
_MONTH_LENGTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
#: One item of a field's list: ``*``, ``N`` or ``N-M``, with an optional ``/STEP``.
_ITEM = re.compile(r"^(\*|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(/.*)?$")


@dataclass(frozen=True)
class CronExpr:
    """Five fields read: the values each allows, and which started with ``*``."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday .. 6 = Saturday
    stars: tuple[bool, bool, bool, bool, bool]

    @property
    def wildcard(self) -> bool:
        """Cron's wildcard job: the minute or the hour field starts with ``*``."""
        return self.stars[0] or self.stars[1]

    @property
    def either_day(self) -> bool:
        """Both day fields restricted: a day matching either runs the job."""
        return not (self.stars[2] or self.stars[4])

    def day_matches(self, day: date) -> bool:
        if day.month not in self.months:
            return False
        by_day, by_weekday = day.day in self.days, day.isoweekday() % 7 in self.weekdays
        return by_day or by_weekday if self.either_day else by_day and by_weekday

    def matches(self, wall: datetime) -> bool:
        """Whether cron runs the job at this wall-clock minute."""
        return wall.minute in self.minutes and wall.hour in self.hours and self.day_matches(wall.date())


def _digits(text: str) -> bool:
    """ASCII digits only: ``str.isdigit`` also takes ``²`` and ``٣``, which cron does not."""
    return text.isascii() and text.isdigit()


def _number(token: str, field: int, line: int) -> int:
    name, low, high, names = _FIELDS[field]
    if _digits(token):
        value = int(token)
    elif token.lower() in names:
        value = low + names.index(token.lower())
    else:
        also = f" or a name ({names[0]}-{names[-1]})" if names else ""
        raise CrontabError(f"line {line}: {name} {token!r} is not a number{also}")
    if not low <= value <= high:
        raise CrontabError(f"line {line}: {name} {value} is out of range {low}-{high}")
    return value


def _part(text: str, field: int, line: int) -> set[int]:
    name, low, high, names = _FIELDS[field]
    if not _ITEM.match(text):
        also = f" or a name ({names[0]}-{names[-1]})" if names else ""
        raise CrontabError(
            f"line {line}: {name} {text!r} is not a number{also}; a job is five time fields, then its command"
        )
    body, slash, step_text = text.partition("/")
    if body == "*":
        first, last = low, high
    else:
        start, dash, end = body.partition("-")
        first = _number(start, field, line)
        last = _number(end, field, line) if dash else first
        if slash and not dash:
            raise CrontabError(
                f"line {line}: {name} {text!r}: a step follows a range or *; write {body}-{high}/{step_text}"
            )
        if last < first:
            raise CrontabError(f"line {line}: {name} {body!r} runs backwards; write the lower value first")
    step = 1
    if slash:
        if not _digits(step_text) or int(step_text) == 0:
            raise CrontabError(f"line {line}: {name} {text!r}: the step must be a whole number above 0")
        step = int(step_text)
    return set(range(first, last + 1, step))


def parse_fields(fields: tuple[str, ...], line: int) -> CronExpr:
    """Read five time fields; a mistake is a :class:`CrontabError` naming the line and the field."""
    values: list[frozenset[int]] = []
    for index, text in enumerate(fields):
        if not text or any(not part for part in text.split(",")):
            raise CrontabError(f"line {line}: {_FIELDS[index][0]} {text!r} has an empty item")
        found: set[int] = set()
        for part in text.split(","):
            found |= _part(part, index, line)
        values.append(frozenset(found))
    weekdays = frozenset(d % 7 for d in values[4])
    stars = tuple(text.startswith("*") for text in fields)
    return CronExpr(
        values[0], values[1], values[2], values[3], weekdays, (stars[0], stars[1], stars[2], stars[3], stars[4])
    )


def _join(values: frozenset[int] | set[int]) -> str:
    return ",".join(str(v) for v in sorted(values))


def _byday(weekdays: frozenset[int]) -> str:
    codes = {_CODES[d] for d in weekdays}
    return ",".join(code for code in _RFC_ORDER if code in codes)


def _exists(days: frozenset[int] | set[int], months: frozenset[int]) -> bool:
    """Some day of ``days`` exists in some month of ``months``."""
    return any(day <= _MONTH_LENGTH[month - 1] for month in months for day in days)


@dataclass(frozen=True)
class CronRule:
    """One RFC 5545 rule for a job, and which days it takes when the job needed two."""

    rule: str
    part: str | None = None  # None: the rule holds the whole job


def _rule(expr: CronExpr, *, days: frozenset[int] | None, weekdays: frozenset[int] | None) -> str:
    every_minute, every_hour = len(expr.minutes) == 60, len(expr.hours) == 24
    parts: list[str] = []
    if every_minute:
        freq = "MINUTELY"
    elif every_hour:
        freq = "HOURLY"
    elif weekdays is not None and days is None and len(expr.months) == 12:
        freq = "WEEKLY"
    elif days is not None and weekdays is None:
        freq = "MONTHLY"
    else:
        freq = "DAILY"
    parts.append(f"FREQ={freq}")
    if len(expr.months) < 12:
        parts.append(f"BYMONTH={_join(expr.months)}")
    if days is not None:
        parts.append(f"BYMONTHDAY={_join(days)}")
    if weekdays is not None:
        parts.append(f"BYDAY={_byday(weekdays)}")
    if not every_hour:
        parts.append(f"BYHOUR={_join(expr.hours)}")
    if not every_minute:
        parts.append(f"BYMINUTE={_join(expr.minutes)}")
    return ";".join(parts)


def cron_rules(expr: CronExpr) -> list[CronRule]:
    """The rules that together run at exactly the job's minutes; none when it never runs.

    One rule holds a job unless both day fields are restricted (either day runs it): then one
    rule takes the days of the month, and a second the days of the week that are NOT among
    those days of the month, so that no day runs twice.
    """
    all_days, all_weekdays = len(expr.days) == 31, len(expr.weekdays) == 7
    day_filter = None if all_days else expr.days
    weekday_filter = None if all_weekdays else expr.weekdays
    if not expr.either_day or all_days or all_weekdays:
        if expr.either_day:  # either day, and one field takes every day
            day_filter = weekday_filter = None
        if day_filter is not None and not _exists(day_filter, expr.months):
            return []
        return [CronRule(_rule(expr, days=day_filter, weekdays=weekday_filter))]
    rules = []
    if _exists(expr.days, expr.months):
        rules.append(CronRule(_rule(expr, days=expr.days, weekdays=None), "days of the month"))
    others = frozenset(range(1, 32)) - expr.days
    if _exists(others, expr.months):
        rules.append(CronRule(_rule(expr, days=others, weekdays=expr.weekdays), "days of the week"))
    if len(rules) == 1:
        return [CronRule(rules[0].rule)]
    return rules
