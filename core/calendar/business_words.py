"""A business calendar in words: what the holiday policy does, and the next holiday,
closed date or weekend day it touches ("Next: Thu 2027-11-25, Thanksgiving Day: runs Fri
2027-11-26 09:00 instead"). ``schedctl explain``, the summary and the designer
say it with :func:`policy_line`; the words come from the rows the preview shows.
"""

from __future__ import annotations

import itertools
from datetime import date, datetime, timedelta

from core.calendar.business_days import BusinessDays, day_text
from core.enums import HolidayPolicy, Kind, Status
from core.recurrence.compile import compile_schedule
from core.recurrence.describe import join_words
from core.recurrence.expand import iter_rows
from core.recurrence.occurrence import Occurrence
from core.spec.model import WEEKDAY_CODES, BusinessCalendar, ScheduleSpec
from core.time.formats import fmt_clock

#: How far ahead the next touched holiday is looked for, in rows and in time.
LOOKAHEAD_ROWS = 5000
LOOKAHEAD = timedelta(days=400)
_DAY_NAMES = ("Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays")
_DOES = {
    HolidayPolicy.SKIP: "it does not run",
    HolidayPolicy.NEXT_BUSINESS_DAY: "a run moves to the next business day at the same time",
    HolidayPolicy.PREVIOUS_BUSINESS_DAY: "a run moves to the previous business day at the same time",
}


def closed_words(calendar: BusinessCalendar) -> str:
    """``public holidays in US-NY, Saturdays, Sundays and 2 closed dates``."""
    parts = []
    if calendar.holidays:
        parts.append(f"public holidays in {join_words(list(calendar.holidays))}")
    parts += [_DAY_NAMES[WEEKDAY_CODES.index(code)] for code in sorted(calendar.weekend, key=WEEKDAY_CODES.index)]
    if calendar.closed:
        n = len(calendar.closed)
        parts.append(f"{n} closed date" + ("s" if n != 1 else ""))
    return join_words(parts) if parts else "no day"


def policy_words(calendar: BusinessCalendar, policy: HolidayPolicy) -> str:
    """``On public holidays in US-NY, Saturdays and Sundays, a run moves to the next business day at the same time.``"""
    opened = f" (except {len(calendar.open)} listed open)" if calendar.open else ""
    return f"On {closed_words(calendar)}{opened}, {_DOES[policy]}."


def _holiday_name(days: BusinessDays, day: date) -> str | None:
    """What closes ``day``: the holiday's name, ``a closed date`` or ``a weekend day``; None for a
    business day."""
    if days.is_business_day(day):
        return None
    named = days.holidays_on(day)
    if named:
        return join_words(list(dict.fromkeys(name for _, name in named)))
    return "a closed date" if day in days.calendar.closed else "a weekend day"


def _outcome(row: Occurrence, days: BusinessDays) -> str:
    local = row.resolved_local
    if row.runnable and local is not None:
        return f"runs {day_text(local.date())} {fmt_clock(local)} instead"
    wall = days.place(row.nominal).wall
    if row.status is Status.SKIPPED_DUPLICATE and wall is not None:
        return f"lands on {day_text(wall.date())} {fmt_clock(wall)}, which already runs"
    return "does not run"


def next_touch(spec: ScheduleSpec, now: datetime) -> str | None:
    """``Next: Thu 2027-11-25, Thanksgiving Day: runs Fri 2027-11-26 09:00 instead``: the next
    run the calendar moves or skips, on a holiday, a closed date or a weekend day alike; None when
    none is touched within about a year of ``now``."""
    compiled = compile_schedule(spec)
    days = compiled.business_days
    if days is None:
        return None
    for row in itertools.islice(iter_rows(compiled, now), LOOKAHEAD_ROWS):
        if row.position > now + LOOKAHEAD:
            break
        name = _holiday_name(days, row.nominal.date())
        if name is not None:
            return f"Next: {day_text(row.nominal.date())}, {name}: {_outcome(row, days)}"
    return None


def policy_line(spec: ScheduleSpec, now: datetime) -> str | None:
    """The holiday policy in words with the next holiday it touches; None without a business calendar.

    ``On public holidays in US-NY, Saturdays and Sundays, a run moves to the next business day
    at the same time. Next: Thu 2027-11-25, Thanksgiving Day: runs Fri 2027-11-26 09:00 instead.``
    """
    calendar, policy = spec.business_calendar, spec.holiday_policy
    if calendar is None or policy is None or spec.kind is not Kind.CALENDAR:
        return None
    touch = next_touch(spec, now)
    ahead = f" {touch}." if touch else " No holiday, closed date or weekend day touches it in the next year."
    return policy_words(calendar, policy) + ahead
