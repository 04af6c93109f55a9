"""RFC 7529 handling of dates a rule names but the calendar lacks (April 31,
February 29 in a common year), for the BACKWARD and FORWARD policies.

OMIT is RFC 5545's own behaviour and dateutil already does it. For the other
two, month-day rules (MONTHLY or YEARLY, day numbers from BYMONTHDAY or from
``start``) are expanded month by month from the first of each month, and each
missing day is moved to the last valid day before it or the first valid day
after it. Rules that pick days by weekday, year day, week number or set
position only ever name existing days, so nothing is moved for them.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from core.enums import InvalidDatePolicy
from core.recurrence.rules import ParsedRule, build_rrule

_DAY_PICKERS = ("BYDAY", "BYYEARDAY", "BYWEEKNO", "BYSETPOS")


@dataclass(frozen=True)
class MonthDayPlan:
    """How to expand a month-day rule with moved invalid dates."""

    days: tuple[int, ...]
    overrides: dict[str, str | None]
    policy: InvalidDatePolicy


def plan_for(parsed: ParsedRule, start: datetime, policy: InvalidDatePolicy) -> MonthDayPlan | None:
    """A plan when this rule can name missing days and the policy moves them, else None."""
    if policy is InvalidDatePolicy.OMIT or parsed.freq not in ("MONTHLY", "YEARLY"):
        return None
    if any(p in parsed.parts for p in _DAY_PICKERS):
        return None
    explicit = parsed.ints("BYMONTHDAY")
    days = tuple(sorted(set(explicit))) if explicit else (start.day,)
    if not any(d > 28 for d in days):
        return None
    overrides: dict[str, str | None] = {"BYMONTHDAY": "1", "COUNT": None}
    if parsed.freq == "YEARLY" and "BYMONTH" not in parsed.parts and not explicit:
        overrides["BYMONTH"] = str(start.month)
    return MonthDayPlan(days, overrides, policy)


def _fake_date(year: int, month: int, day: int) -> str:
    return f"{year:04d}-{month:02d}-{day:02d}"


def _month_block(first: datetime, plan: MonthDayPlan) -> dict[datetime, str | None]:
    """The wall times one month names, each with a note when it was moved there."""
    block: dict[datetime, str | None] = {}
    month_len = calendar.monthrange(first.year, first.month)[1]
    for d in plan.days:
        if d < 0:
            if -d <= month_len:
                block.setdefault(first.replace(day=month_len + d + 1), None)
            continue
        if d <= month_len:
            block[first.replace(day=d)] = None  # a real date wins over a moved one
            continue
        missing = _fake_date(first.year, first.month, d)
        if plan.policy is InvalidDatePolicy.BACKWARD:
            moved = first.replace(day=month_len)
            note = (
                f"{missing} does not exist: moved back to {moved.date().isoformat()}, "
                "the last day of the month (invalidDatePolicy BACKWARD)"
            )
        else:
            moved = datetime.combine(date(first.year, first.month, month_len) + timedelta(days=1), first.time())
            note = (
                f"{missing} does not exist: moved forward to {moved.date().isoformat()}, "
                "the first day after it (invalidDatePolicy FORWARD)"
            )
        block.setdefault(moved, note)
    return block


def _merged(base: Iterator[datetime], plan: MonthDayPlan) -> Iterator[tuple[datetime, str | None]]:
    """Month by month, in order; a time reached twice (a moved date landing on the
    next month's first day) is one row."""
    block: dict[datetime, str | None] = {}
    month: tuple[int, int] | None = None
    previous: set[datetime] = set()

    def release() -> Iterator[tuple[datetime, str | None]]:
        nonlocal previous
        fresh = [when for when in sorted(block) if when not in previous]
        previous = set(fresh)
        return ((when, block[when]) for when in fresh)

    for first in base:
        key = (first.year, first.month)
        if key != month and block:
            yield from release()
            block = {}
        month = key
        for when, note in _month_block(first, plan).items():
            if note is None or when not in block:
                block[when] = note
    yield from release()


def expand_month_days(
    parsed: ParsedRule, start: datetime, plan: MonthDayPlan, until: datetime | None
) -> Iterator[tuple[datetime, str | None]]:
    """Nominal wall times in order, each with a note when it was moved."""
    base = build_rrule(parsed, start.replace(day=1), until=None, overrides=plan.overrides)
    count_left = int(parsed.parts["COUNT"]) if "COUNT" in parsed.parts else None
    for when, note in _merged(iter(base), plan):
        if when < start:
            continue
        if until is not None and when > until:
            return
        if count_left is not None:
            if count_left <= 0:
                return
            count_left -= 1
        yield when, note


@dataclass(frozen=True)
class MissingDate:
    """A date a month-day rule names that its month lacks, which OMIT leaves without a run."""

    #: ``2027-02-31``, as the rule names it.
    text: str
    #: The first wall moment after the month: where the date would sit among the rows.
    after_month: datetime

    @property
    def line(self) -> str:
        return f"{self.text} does not exist: no run (invalidDatePolicy OMIT)"


#: The most months :func:`missing_dates` looks through (a century of a monthly rule).
MISSING_SCAN_MONTHS = 1200


def missing_dates(parsed: ParsedRule, start: datetime, first: datetime, last: datetime) -> list[MissingDate]:
    """The dates the rule names that their month lacks, for the months it visits whose end lies in
    ``(first, last]`` (wall times): the dates OMIT leaves out between rows at ``first`` and ``last``."""
    plan = plan_for(parsed, start, InvalidDatePolicy.BACKWARD)  # None for rules that only name existing days
    if plan is None or last <= first:
        return []
    one_time = {**plan.overrides, "BYHOUR": None, "BYMINUTE": None, "BYSECOND": None}
    months = build_rrule(parsed, start.replace(day=1, hour=0, minute=0, second=0), until=None, overrides=one_time)
    out: list[MissingDate] = []
    for visited, month in enumerate(months.xafter(first.replace(day=1, hour=0, minute=0, second=0), inc=True)):
        length = calendar.monthrange(month.year, month.month)[1]
        after = datetime.combine(date(month.year, month.month, length) + timedelta(days=1), datetime.min.time())
        if month > last or visited >= MISSING_SCAN_MONTHS:
            break
        if after <= first or after <= start or after > last:
            continue
        out.extend(MissingDate(_fake_date(month.year, month.month, d), after) for d in plan.days if d > length)
    return out
