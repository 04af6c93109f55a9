"""Business days: which local dates a business calendar closes, and where a nominal
date that is closed goes under the holiday policy.

A date is closed when one of the calendar's holiday codes lists it (the
``holidays`` package's days for the code, observed days included), when
``closed`` lists it, or when its weekday is in ``weekend``; ``open`` lists dates
that are business days despite all that. :meth:`BusinessDays.place` is the one
step expansion takes between the rule's nominal date and the zone's gap and fold
policies (docs/decisions.md "Business days"): a business day stays, a closed one
is skipped or moved to the next or previous business day at the same wall time.
Everything here is pure: the same calendar and holidays data give the same
answers; the closed days of a code are read once per year.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from core.calendar.holiday_codes import closed_days
from core.enums import HolidayPolicy
from core.errors import ComputeLimitError
from core.spec.model import WEEKDAY_CODES, BusinessCalendar

#: How far a move looks for a business day before it gives up with a clear error.
SEARCH_DAYS = 400
_WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def day_text(day: date) -> str:
    """``Fri 2027-11-26``."""
    return f"{_WEEKDAY_NAMES[day.weekday()][:3]} {day.isoformat()}"


@dataclass(frozen=True)
class Placement:
    """Where one nominal wall time goes: ``wall`` (None: skipped) and why, or nothing to say."""

    wall: datetime | None
    reason: str | None = None

    @property
    def moved(self) -> bool:
        return self.wall is not None and self.reason is not None


class BusinessDays:
    """A business calendar read for expansion: closed days with their reasons, cached by date."""

    def __init__(self, calendar: BusinessCalendar, policy: HolidayPolicy) -> None:
        self.calendar = calendar
        self.policy = policy
        self._codes = tuple(calendar.holidays)
        self._weekend = frozenset(WEEKDAY_CODES.index(code) for code in calendar.weekend)
        self._closed = frozenset(calendar.closed)
        self._open = frozenset(calendar.open)
        self._why: dict[date, str | None] = {}

    def holidays_on(self, day: date) -> list[tuple[str, str]]:
        """The (code, holiday name) pairs that close ``day``, in the calendar's code order."""
        return [(code, name) for code in self._codes if (name := closed_days(code, day.year).get(day)) is not None]

    def closed_because(self, day: date) -> str | None:
        """Why ``day`` is not a business day ("Christmas Day in US-NY"), or None when it is one."""
        try:
            return self._why[day]
        except KeyError:
            pass
        why: str | None = None
        if day not in self._open:
            named = self.holidays_on(day)
            if named:
                why = "; ".join(f"{name} in {code}" for code, name in named)
            elif day in self._closed:
                why = "closed (businessCalendar.closed)"
            elif day.weekday() in self._weekend:
                why = f"a {_WEEKDAY_NAMES[day.weekday()]} (weekend)"
        self._why[day] = why
        return why

    def is_business_day(self, day: date) -> bool:
        return self.closed_because(day) is None

    def _step(self, day: date, step: int) -> date:
        probe = day
        for _ in range(SEARCH_DAYS):
            probe += timedelta(days=step)
            if self.is_business_day(probe):
                return probe
        direction = "after" if step > 0 else "before"
        raise ComputeLimitError(
            f"the business calendar has no business day within {SEARCH_DAYS} days {direction} {day.isoformat()}"
        )

    def next_business_day(self, day: date) -> date:
        """The first business day after ``day``."""
        return self._step(day, 1)

    def previous_business_day(self, day: date) -> date:
        """The last business day before ``day``."""
        return self._step(day, -1)

    def place(self, nominal: datetime) -> Placement:
        """Where the nominal wall time ``nominal`` goes under the policy (the wall time is kept)."""
        day = nominal.date()
        why = self.closed_because(day)
        if why is None:
            return Placement(nominal)
        closed = f"{day.isoformat()} is {why}"
        if self.policy is HolidayPolicy.SKIP:
            return Placement(None, closed)
        if self.policy is HolidayPolicy.NEXT_BUSINESS_DAY:
            target, which = self.next_business_day(day), "next"
        else:
            target, which = self.previous_business_day(day), "previous"
        wall = datetime.combine(target, nominal.time())
        return Placement(wall, f"{closed}: moved to the {which} business day, {day_text(target)}")

    def earliest_from(self, local: datetime) -> datetime:
        """The earliest nominal wall time whose placement can land at or after ``local``.

        Under NEXT_BUSINESS_DAY a closed run of days just before ``local`` moves
        onto or after it; under the other policies nothing moves later."""
        if self.policy is not HolidayPolicy.NEXT_BUSINESS_DAY:
            return local
        day = local.date()
        for _ in range(SEARCH_DAYS):
            if self.is_business_day(day - timedelta(days=1)):
                break
            day -= timedelta(days=1)
        return min(local, datetime.combine(day, datetime.min.time()))

    def floor(self, nominal: datetime) -> datetime:
        """A wall time no placement of a nominal at or after ``nominal`` lands before.

        Only PREVIOUS_BUSINESS_DAY moves earlier: a later nominal lands on the
        last business day at or before its own date, never before ``nominal``'s."""
        if self.policy is not HolidayPolicy.PREVIOUS_BUSINESS_DAY:
            return nominal
        day = nominal.date()
        if not self.is_business_day(day):
            day = self.previous_business_day(day)
        return datetime.combine(day, datetime.min.time())


def longest_closure(days: BusinessDays) -> tuple[date, int] | None:
    """The first run of consecutive closed days longer than SEARCH_DAYS that holds a
    ``closed`` date: its first day and its length (counted up to SEARCH_DAYS + 1); None
    when there is none. A move off a day of such a run can find no business day
    (:meth:`BusinessDays.place`).

    One pass over the sorted dates: each is looked at once, and between two of them only
    the weekend and holidays are walked (a walk stops past SEARCH_DAYS + 1 days)."""
    limit = SEARCH_DAYS + 1
    covered: date | None = None  # the last day of the run just walked
    for day in sorted(days.calendar.closed):
        if (covered is not None and day <= covered) or days.is_business_day(day):
            continue
        first = day
        while day - first < timedelta(days=limit) and not days.is_business_day(first - timedelta(days=1)):
            first -= timedelta(days=1)
        last = day
        while last - first < timedelta(days=limit) and not days.is_business_day(last + timedelta(days=1)):
            last += timedelta(days=1)
        length = (last - first).days + 1
        if length > SEARCH_DAYS:
            return first, length
        covered = last
    return None
