"""Nominal wall times of the common rules by date arithmetic, without dateutil.

Most schedules are DAILY, WEEKLY or MONTHLY at fixed hours and minutes, or
HOURLY or MINUTELY with an INTERVAL that divides the day (every day then has
the same times: an every-minute rule is a daily one at 1,440 times). For
those, :func:`fast_rule` reads the rule once into a :class:`FastRule`, and
:func:`fast_nominals` steps day by day (or week, or month) and adds the
times of day: the same wall times, in the same order, as dateutil's rrule
over the same rule and start (RFC 5545 as dateutil reads it: a missing
month day is left out, BYxxx parts filter, the defaults come from DTSTART).
:func:`fast_walls` gives the same times, each beside its second reading.

Anything else returns None from :func:`fast_rule` and keeps the general
path: YEARLY, an HOURLY or MINUTELY INTERVAL that does not divide the
day, COUNT, numbered weekdays, BYSETPOS, and month days moved by
``invalidDatePolicy``.

:class:`Resolver` is :func:`~core.recurrence.resolve.resolve` without the
zone's yearly index: a wall time that exists once (its two readings agree)
is read with one offset, which a rule with a few times a year (whose every
year would otherwise build an index) needs most.
"""

from __future__ import annotations

import calendar
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import cast
from zoneinfo import ZoneInfo

from core.enums import FoldPolicy, GapPolicy, Status
from core.recurrence.compile import CompiledSchedule
from core.recurrence.resolve import Reading, resolve
from core.recurrence.rules import WEEKDAYS

#: The parts a fast rule may have; any other part keeps the general path.
_PARTS = frozenset({"FREQ", "INTERVAL", "UNTIL", "BYMONTH", "BYMONTHDAY", "BYDAY", "BYHOUR", "BYMINUTE", "BYSECOND"})
_PARTS_WITH_WKST = _PARTS | {"WKST"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_NAIVE = datetime(1970, 1, 1)


@dataclass(frozen=True)
class FastRule:
    """A DAILY, WEEKLY or MONTHLY rule at fixed times of day, as date arithmetic needs it (an
    HOURLY or MINUTELY one whose INTERVAL divides the day is a DAILY one at its times)."""

    freq: str
    interval: int
    start: datetime
    until: datetime | None  # inclusive, on the wall clock
    times: tuple[time, ...]  # sorted
    months: frozenset[int] | None  # BYMONTH
    weekdays: frozenset[int] | None  # BYDAY (Monday is 0), the default of WEEKLY included
    month_days: tuple[int, ...] | None  # BYMONTHDAY (negative counts from the end), MONTHLY's default included
    week_start: int  # WKST, for the weeks INTERVAL counts


def fast_rule(compiled: CompiledSchedule) -> FastRule | None:
    """The rule of ``compiled`` when date arithmetic can expand it, else None."""
    parsed, start = compiled.parsed, compiled.facts.start
    if parsed is None or start is None or compiled.month_days is not None or start.microsecond:
        return None
    parts = parsed.parts
    freq = parsed.freq
    if freq not in ("DAILY", "WEEKLY", "MONTHLY", "HOURLY", "MINUTELY") or not parts.keys() <= _PARTS_WITH_WKST:
        return None
    byday = parsed.byday()
    if any(n is not None for n, _ in byday):
        return None
    weekdays = frozenset(WEEKDAYS.index(name) for _, name in byday) or None
    month_days = tuple(parsed.ints("BYMONTHDAY")) or None
    if freq == "WEEKLY" and weekdays is None:
        weekdays = frozenset({start.weekday()})
    if freq == "MONTHLY" and weekdays is None and month_days is None:
        month_days = (start.day,)
    interval = int(parts.get("INTERVAL", "1"))
    if freq in _SUB_DAILY:
        found = _sub_daily_times(
            freq,
            interval,
            start.time(),
            tuple(parsed.ints("BYHOUR")),
            tuple(parsed.ints("BYMINUTE")),
            tuple(parsed.ints("BYSECOND")),
        )
        if found is None:
            return None
        freq, interval, times = "DAILY", 1, found  # the same times every day
    else:
        times = tuple(
            dict.fromkeys(
                sorted(
                    time(h, m, s)
                    for h in parsed.ints("BYHOUR") or [start.hour]
                    for m in parsed.ints("BYMINUTE") or [start.minute]
                    for s in parsed.ints("BYSECOND") or [start.second]
                )
            )
        )
    return FastRule(
        freq=freq,
        interval=interval,
        start=start,
        until=compiled.until,
        times=times,
        months=frozenset(parsed.ints("BYMONTH")) or None,
        weekdays=weekdays,
        month_days=month_days,
        week_start=WEEKDAYS.index(parts.get("WKST", "MO")),
    )


#: Sets of times of day of sub-daily rules kept (each one some 60 KiB for an every-minute rule).
_KEPT_TIMES = 32
#: The sub-daily frequencies and the steps in a day of each.
_SUB_DAILY = {"HOURLY": 24, "MINUTELY": 24 * 60}


@functools.lru_cache(maxsize=_KEPT_TIMES)
def _sub_daily_times(
    freq: str, interval: int, start: time, hours: tuple[int, ...], minutes: tuple[int, ...], seconds: tuple[int, ...]
) -> tuple[time, ...] | None:
    """The times of day of an HOURLY or MINUTELY rule whose INTERVAL divides the day (then every
    day has the same ones: the steps from DTSTART's time ``start``, BYHOUR and for MINUTELY
    BYMINUTE keeping some, BYMINUTE for HOURLY and BYSECOND adding them); None for another
    INTERVAL, or when the parts leave no time. The last few are kept: an every-minute rule has
    1,440 (some 60 KiB), and every expansion reads its rule."""
    steps = _SUB_DAILY[freq]
    if steps % interval:
        return None
    if freq == "HOURLY":
        stamps = [
            (h, m)
            for h in range(24)
            if (h - start.hour) % interval == 0 and (not hours or h in hours)
            for m in minutes or [start.minute]
        ]
    else:
        origin = start.hour * 60 + start.minute
        stamps = [
            divmod(x, 60)
            for x in range(steps)
            if (x - origin) % interval == 0 and (not hours or x // 60 in hours) and (not minutes or x % 60 in minutes)
        ]
    times = sorted({time(h, m, s) for h, m in stamps for s in seconds or [start.second]})
    return tuple(times) or None


def fast_nominals(rule: FastRule, after: datetime | None = None) -> Iterator[tuple[datetime, None]]:
    """The rule's wall times (at or after ``after`` when given), in order, each with no move note
    (the shape of :meth:`CompiledSchedule.nominals`). Ends at UNTIL or at the calendar's end."""
    return cast("Iterator[tuple[datetime, None]]", _walls(rule, after, seconds=False))


def fast_walls(rule: FastRule, after: datetime | None = None) -> Iterator[tuple[datetime, datetime]]:
    """:func:`fast_nominals`' wall times, each beside its second reading (the same time with
    ``fold=1``), which tells whether it exists exactly once: made from the date as the time is,
    it costs a fifth of ``replace(fold=1)``."""
    return cast("Iterator[tuple[datetime, datetime]]", _walls(rule, after, seconds=True))


@functools.lru_cache(maxsize=_KEPT_TIMES)
def _second_readings(times: tuple[time, ...]) -> tuple[time, ...]:
    """``times`` with ``fold=1``, kept like the times themselves (:func:`_sub_daily_times`): an
    every-minute rule has 1,440, and the misfire step and materialization ask for them on every
    expansion."""
    return tuple(t.replace(fold=1) for t in times)


#: Times of day from which a rule's pairs are kept (:func:`_paired`): a daily rule's few are
#: made anew, so that the many daily rules of a catalogue do not push a sub-daily rule's out.
_SHARED_PAIRS = 24


def _pairs(times: tuple[time, ...], seconds: bool) -> tuple[tuple[time, time | None], ...]:
    """Each of ``times`` beside its second reading (with ``seconds``) or None."""
    return tuple(zip(times, _second_readings(times) if seconds else (None,) * len(times), strict=True))


#: :func:`_pairs` kept like the times: the expansions kept to go on from
#: (:mod:`core.ledger.materialize`) then share one, not 1,440 pairs each for an every-minute rule.
_paired = functools.lru_cache(maxsize=_KEPT_TIMES)(_pairs)


def _walls(rule: FastRule, after: datetime | None, *, seconds: bool) -> Iterator[tuple[datetime, datetime | None]]:
    """The rule's wall times from ``after``, each with its second reading on the same date (with
    ``seconds``; else None)."""
    first = rule.start if after is None or after < rule.start else after
    until = rule.until
    pairs = (_paired if len(rule.times) >= _SHARED_PAIRS else _pairs)(rule.times, seconds)
    combine = datetime.combine
    try:
        for day in _days(rule, first.date()):
            for t, second in pairs:
                when = combine(day, t)
                if when < first:
                    continue
                if until is not None and when > until:
                    return
                yield when, None if second is None else combine(day, second)
    except OverflowError:  # past 9999-12-31: the calendar ends
        return


def _days(rule: FastRule, first: date) -> Iterator[date]:
    """The dates the rule names from ``first`` on (``first`` no earlier than the start's date)."""
    if rule.freq == "MONTHLY":
        return _month_days(rule, first)
    if rule.freq == "WEEKLY":
        return _week_days(rule, first)
    return _daily(rule, first)


def _fits(rule: FastRule, day: date) -> bool:
    """Whether ``day`` passes the BYMONTH, BYDAY and BYMONTHDAY filters."""
    if rule.months is not None and day.month not in rule.months:
        return False
    if rule.weekdays is not None and day.weekday() not in rule.weekdays:
        return False
    if rule.month_days is not None:
        last = calendar.monthrange(day.year, day.month)[1]
        return day.day in rule.month_days or day.day - last - 1 in rule.month_days
    return True


def _daily(rule: FastRule, first: date) -> Iterator[date]:
    origin = rule.start.date()
    step = rule.interval
    k = -(-(first - origin).days // step)  # the first step at or after ``first``
    day = origin + timedelta(days=k * step)
    delta = timedelta(days=step)
    plain = rule.months is None and rule.weekdays is None and rule.month_days is None
    while True:
        if plain or _fits(rule, day):
            yield day
        day += delta


def _week_days(rule: FastRule, first: date) -> Iterator[date]:
    origin = rule.start.date()
    week0 = origin - timedelta(days=(origin.weekday() - rule.week_start) % 7)
    step = rule.interval
    k = -(-((first - week0).days // 7) // step) * step  # the first counted week at or after ``first``'s
    week = week0 + timedelta(weeks=k)
    offsets = sorted((d - rule.week_start) % 7 for d in rule.weekdays or ())
    later = timedelta(weeks=step)
    while True:
        for offset in offsets:
            day = week + timedelta(days=offset)
            if day >= first and (rule.months is None or day.month in rule.months):
                yield day
        week += later


def _month_days(rule: FastRule, first: date) -> Iterator[date]:
    origin = rule.start.date()
    step = rule.interval
    months = (first.year - origin.year) * 12 + first.month - origin.month
    k = -(-months // step) * step
    index = origin.year * 12 + origin.month - 1 + k
    while True:
        year, month = divmod(index, 12)
        month += 1
        if rule.months is None or month in rule.months:
            last = calendar.monthrange(year, month)[1]
            for number in _numbers(rule, year, month, last):
                day = date(year, month, number)
                if day >= first:
                    yield day
        index += step
        if index >= 10_000 * 12:  # past December 9999
            return


def _numbers(rule: FastRule, year: int, month: int, last: int) -> list[int]:
    """The day numbers of one month the rule names, in order."""
    if rule.month_days is not None:
        numbers = sorted({d if d > 0 else last + 1 + d for d in rule.month_days if -last <= d <= last and d})
    else:
        numbers = list(range(1, last + 1))
    if rule.weekdays is not None:
        first_weekday = date(year, month, 1).weekday()
        numbers = [n for n in numbers if (first_weekday + n - 1) % 7 in rule.weekdays]
    return numbers


class Resolver:
    """:func:`~core.recurrence.resolve.resolve` with its policies fixed: a wall time whose two
    readings (``fold`` 0 and 1) have the same offset exists exactly once and costs two offset
    lookups; only a time in a gap or a fold takes the general resolution."""

    __slots__ = ("_fold", "_gap", "_name", "_zone")

    def __init__(self, zone: ZoneInfo, name: str, gap: GapPolicy, fold: FoldPolicy) -> None:
        self._zone, self._name, self._gap, self._fold = zone, name, gap, fold

    def __call__(self, local: datetime) -> list[Reading]:
        zone = self._zone
        off = zone.utcoffset(local)
        if off is None or off != zone.utcoffset(local.replace(fold=1)):
            return resolve(zone, self._name, local, self._gap, self._fold)
        instant = _EPOCH + (local - off - _EPOCH_NAIVE)
        return [Reading(0, Status.SCHEDULED, instant, instant, off, zone.tzname(local), None)]
