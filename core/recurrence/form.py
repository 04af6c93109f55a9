"""A calendar rule as a recurrence dialog shows it, and back to RRULE text.

:class:`RuleForm` holds what a calendar app's "custom recurrence" dialog
edits: a frequency and interval, weekdays, a day of the month (a number, the
Nth weekday, the last day, the last weekday), months, times of day and a
count. :func:`form_from_rule` reads RRULE text into a form, or returns None
when the rule uses parts a form cannot show (BYWEEKNO, BYYEARDAY, an unusual
BYSETPOS...); :func:`rule_text` writes a form back as canonical rule text.

Parts a rule leaves out take their values from ``start``, as in RFC 5545
(``FREQ=DAILY`` runs at the start's time of day), so a form always shows
explicit values and the text it writes names them.

An end *date* is not part of the form: the designer writes it to the spec's
``end`` key (local wall time, like ``start``). A rule that carries its own
``UNTIL`` keeps it, verbatim, in :attr:`RuleForm.until`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from core.errors import UserError
from core.recurrence.rules import WEEKDAYS, ParsedRule, RuleError, normalize_rule_text, number_runs, parse_rule

#: Frequencies from the finest to the coarsest.
FREQUENCIES = ("MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY")
#: Monday to Friday, as RRULE spells them.
WORKDAYS = ("MO", "TU", "WE", "TH", "FR")
#: The Nth weekday a form can name: first to fifth, and -1 for the last.
NTH_CHOICES = (1, 2, 3, 4, 5, -1)

MonthMode = Literal["day", "nth_weekday", "last_day", "last_weekday"]
MONTH_MODES: tuple[MonthMode, ...] = ("day", "nth_weekday", "last_day", "last_weekday")


class FormError(UserError):
    """The form's choices cannot be written as a rule; the message says which and why."""


@dataclass(frozen=True)
class RuleForm:
    """A calendar rule as form fields. Tuples are sorted and hold no repeats.

    Which fields apply depends on :attr:`freq`:

    - ``weekdays``: WEEKLY runs on these days (never empty); MINUTELY, HOURLY
      and DAILY run only on these days (empty: every day).
    - ``month_mode`` with ``month_days`` / ``nth`` + ``nth_weekday``: MONTHLY
      and YEARLY; ``months``: YEARLY only.
    - ``hours`` and ``minutes``: DAILY and coarser run at every combination
      (both never empty); HOURLY runs at ``minutes`` past the hour, only in
      ``hours`` when given; MINUTELY runs only in ``hours`` when given.
    """

    freq: str = "DAILY"
    interval: int = 1
    weekdays: tuple[str, ...] = ()
    month_mode: MonthMode = "day"
    month_days: tuple[int, ...] = ()
    nth: int = 1
    nth_weekday: str = "MO"
    months: tuple[int, ...] = ()
    hours: tuple[int, ...] = ()
    minutes: tuple[int, ...] = ()
    count: int | None = None
    until: str | None = None
    wkst: str | None = None

    @property
    def times(self) -> tuple[tuple[int, int], ...]:
        """Every (hour, minute) the rule runs at, for DAILY and coarser."""
        return tuple((h, m) for h in self.hours for m in self.minutes)

    @property
    def uses_days_of_month(self) -> bool:
        return self.freq in ("MONTHLY", "YEARLY")


def _sorted_unique(values: Iterable[int]) -> tuple[int, ...]:
    return tuple(sorted(set(values)))


def _weekday_order(days: Iterable[str]) -> tuple[str, ...]:
    wanted = set(days)
    return tuple(d for d in WEEKDAYS if d in wanted)


def times_parts(times: Iterable[tuple[int, int]]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Split times of day into BYHOUR and BYMINUTE values.

    A rule runs at every combination of its hours and minutes, so the times
    must be exactly such a grid; otherwise :class:`FormError` says which
    extra times the rule would add.
    """
    wanted = set(times)
    if not wanted:
        raise FormError("give at least one time of day")
    hours = _sorted_unique(h for h, _ in wanted)
    minutes = _sorted_unique(m for _, m in wanted)
    extra = sorted({(h, m) for h in hours for m in minutes} - wanted)
    if extra:
        shown = ", ".join(f"{h:02d}:{m:02d}" for h, m in extra)
        raise FormError(
            "a rule runs at every listed hour combined with every listed minute, so these times would also "
            f"run at {shown}; use the same minutes for every hour, or edit the rule as text"
        )
    return hours, minutes


def form_from_rule(text: str, start: datetime) -> RuleForm | None:
    """The form showing ``text``, with parts it leaves out filled from ``start``.

    Returns None when the rule uses parts the form cannot show. Raises
    :class:`~core.recurrence.rules.RuleError` when the text is not a valid rule.
    """
    parsed = parse_rule(text)
    parts = dict(parsed.parts)
    freq = parts.pop("FREQ")
    interval = int(parts.pop("INTERVAL", "1"))
    count_text = parts.pop("COUNT", None)
    until = parts.pop("UNTIL", None)
    wkst = parts.pop("WKST", None)
    if "BYWEEKNO" in parts or "BYYEARDAY" in parts:
        return None
    if "BYSECOND" in parts and parsed.ints("BYSECOND") != [start.second]:
        return None
    hours = _sorted_unique(parsed.ints("BYHOUR"))
    minutes = _sorted_unique(parsed.ints("BYMINUTE"))
    if freq == "MINUTELY":
        if minutes:
            return None
    elif freq == "HOURLY":
        minutes = minutes or (start.minute,)
    else:
        hours = hours or (start.hour,)
        minutes = minutes or (start.minute,)
    byday = parsed.byday()
    month_days = parsed.ints("BYMONTHDAY")
    months = parsed.ints("BYMONTH")
    setpos = parsed.ints("BYSETPOS")
    form = RuleForm(
        freq=freq,
        interval=interval,
        hours=hours,
        minutes=minutes,
        count=int(count_text) if count_text else None,
        until=until,
        wkst=wkst,
    )
    if freq not in ("MONTHLY", "YEARLY"):
        if months or month_days or setpos or any(n is not None for n, _ in byday):
            return None
        weekdays = _weekday_order(d for _, d in byday)
        if freq == "WEEKLY" and not weekdays:
            weekdays = (WEEKDAYS[start.weekday()],)
        return replace(form, weekdays=weekdays)
    if freq == "YEARLY":
        if not months:
            if month_days or byday or setpos:
                return None  # days of every month in a yearly rule: the form has no words for it
            months = [start.month]
        form = replace(form, months=_sorted_unique(months))
    elif months:
        return None
    return _month_part(form, byday, month_days, setpos, start)


def _month_part(
    form: RuleForm, byday: list[tuple[int | None, str]], month_days: list[int], setpos: list[int], start: datetime
) -> RuleForm | None:
    if setpos:
        if setpos == [-1] and byday == [(None, d) for d in WORKDAYS] and not month_days and len(form.months) <= 1:
            return replace(form, month_mode="last_weekday")
        return None
    if byday:
        if month_days or len(byday) != 1:
            return None
        nth, weekday = byday[0]
        if nth not in NTH_CHOICES:
            return None
        return replace(form, month_mode="nth_weekday", nth=nth, nth_weekday=weekday)
    if month_days == [-1]:
        return replace(form, month_mode="last_day")
    if any(d < 0 for d in month_days):
        return None
    return replace(form, month_mode="day", month_days=_sorted_unique(month_days or [start.day]))


def rule_text(form: RuleForm) -> str:
    """The canonical RRULE text of ``form``; :class:`FormError` when a choice is missing or impossible."""
    if form.freq not in FREQUENCIES:
        raise FormError(f"{form.freq!r} is not a frequency; choose one of {', '.join(FREQUENCIES)}")
    if form.interval < 1:
        raise FormError("repeat every 1 or more")
    if form.count is not None and form.count < 1:
        raise FormError("the number of occurrences must be at least 1")
    parts: list[tuple[str, str]] = [("FREQ", form.freq)]
    if form.interval != 1:
        parts.append(("INTERVAL", str(form.interval)))
    if form.count is not None:
        parts.append(("COUNT", str(form.count)))
    if form.until is not None:
        parts.append(("UNTIL", form.until))
    if form.uses_days_of_month:
        parts.extend(_month_parts(form))
    else:
        if form.freq == "WEEKLY" and not form.weekdays:
            raise FormError("choose at least one weekday")
        if form.weekdays:
            parts.append(("BYDAY", ",".join(_weekday_order(form.weekdays))))
    if form.freq in ("MINUTELY", "HOURLY"):
        if form.hours:
            parts.append(("BYHOUR", _join(form.hours)))
        if form.freq == "HOURLY":
            if not form.minutes:
                raise FormError("choose at least one minute past the hour")
            parts.append(("BYMINUTE", _join(form.minutes)))
    else:
        if not form.hours or not form.minutes:
            raise FormError("give at least one time of day")
        parts.append(("BYHOUR", _join(form.hours)))
        parts.append(("BYMINUTE", _join(form.minutes)))
    if form.wkst is not None:
        parts.append(("WKST", form.wkst))
    return normalize_rule_text(";".join(f"{k}={v}" for k, v in parts))


def _join(values: Iterable[int]) -> str:
    return ",".join(str(v) for v in _sorted_unique(values))


def _month_parts(form: RuleForm) -> list[tuple[str, str]]:
    parts: list[tuple[str, str]] = []
    if form.freq == "YEARLY":
        if not form.months:
            raise FormError("choose at least one month")
        if form.month_mode == "last_weekday" and len(form.months) > 1:
            raise FormError("'last weekday' works with one month at a time in a yearly rule")
        parts.append(("BYMONTH", _join(form.months)))
    if form.month_mode == "day":
        if not form.month_days:
            raise FormError("choose at least one day of the month")
        if any(not 1 <= d <= 31 for d in form.month_days):
            raise FormError("days of the month are 1 to 31")
        parts.append(("BYMONTHDAY", _join(form.month_days)))
    elif form.month_mode == "last_day":
        parts.append(("BYMONTHDAY", "-1"))
    elif form.month_mode == "nth_weekday":
        if form.nth not in NTH_CHOICES:
            raise FormError("choose first, second, third, fourth, fifth or last")
        if form.nth_weekday not in WEEKDAYS:
            raise FormError(f"{form.nth_weekday!r} is not a weekday")
        parts.append(("BYDAY", f"{form.nth}{form.nth_weekday}"))
    else:
        parts.append(("BYDAY", ",".join(WORKDAYS)))
        parts.append(("BYSETPOS", "-1"))
    return parts


def switch_frequency(form: RuleForm, freq: str, start: datetime) -> RuleForm:
    """``form`` moved to another frequency: what still applies is kept, the rest filled from ``start``.

    The interval goes back to 1, since "every 2" means something else per unit.
    """
    if freq == form.freq:
        return form
    base = RuleForm(freq=freq, count=form.count, until=form.until, wkst=form.wkst)
    weekday = WEEKDAYS[start.weekday()]
    coarse_before = form.freq not in ("MINUTELY", "HOURLY")
    if freq == "MINUTELY":
        return replace(base, weekdays=form.weekdays if not form.uses_days_of_month else ())
    if freq == "HOURLY":
        minutes = form.minutes or (start.minute,)
        return replace(base, minutes=minutes, weekdays=form.weekdays if not form.uses_days_of_month else ())
    hours = form.hours if coarse_before and form.hours else (start.hour,)
    minutes = form.minutes if form.minutes else (start.minute,)
    base = replace(base, hours=hours, minutes=minutes)
    if freq == "DAILY":
        return replace(base, weekdays=form.weekdays if not form.uses_days_of_month else ())
    if freq == "WEEKLY":
        days = form.weekdays if form.weekdays and not form.uses_days_of_month else (weekday,)
        return replace(base, weekdays=days)
    if form.uses_days_of_month:
        base = replace(
            base,
            month_mode=form.month_mode,
            month_days=form.month_days or (start.day,),
            nth=form.nth,
            nth_weekday=form.nth_weekday,
        )
    else:
        base = replace(base, month_mode="day", month_days=(start.day,), nth_weekday=weekday)
    if freq == "YEARLY":
        months = form.months or (start.month,)
        if base.month_mode == "last_weekday":
            months = months[:1]
        return replace(base, months=months)
    return base


# --- the form's text fields ------------------------------------------------------

_TIME = re.compile(r"^(\d{1,2})(?::(\d{2}))?$")


def parse_numbers(text: str, lo: int, hi: int, what: str) -> tuple[int, ...]:
    """``"1, 15"`` or ``"9-17"`` as sorted unique numbers in ``lo..hi``; ValueError naming the bad item."""
    out: set[int] = set()
    for item in (i.strip() for i in text.replace(";", ",").split(",")):
        if not item:
            continue
        m = re.fullmatch(r"(\d{1,2})\s*[-–]\s*(\d{1,2})", item)
        first, last = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        if m is None:
            if not item.isdigit():
                raise ValueError(f"{item!r} is not a number; {what} are {lo} to {hi}, e.g. 1, 15 or 9-17")
            first = last = int(item)
        assert first is not None and last is not None
        if first > last:
            raise ValueError(f"{item!r} runs backwards; write the smaller number first")
        if first < lo or last > hi:
            raise ValueError(f"{item!r} is out of range; {what} are {lo} to {hi}")
        out.update(range(first, last + 1))
    return tuple(sorted(out))


def format_numbers(values: tuple[int, ...]) -> str:
    """``1, 15`` or ``9-16`` (runs of three or more as a range)."""
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in number_runs(values))


def parse_times(text: str) -> tuple[tuple[int, int], ...]:
    """``"02:30, 14:30"`` as (hour, minute) pairs; ValueError naming the bad item."""
    out: set[tuple[int, int]] = set()
    for item in (i.strip() for i in text.replace(";", ",").split(",")):
        if not item:
            continue
        m = _TIME.fullmatch(item)
        if not m or int(m.group(1)) > 23 or int(m.group(2) or 0) > 59:
            raise ValueError(f"{item!r} is not a time of day like 02:30 or 14:05")
        out.add((int(m.group(1)), int(m.group(2) or 0)))
    if not out:
        raise ValueError("give at least one time of day, like 02:30")
    return tuple(sorted(out))


def format_times(times: tuple[tuple[int, int], ...]) -> str:
    return ", ".join(f"{h:02d}:{m:02d}" for h, m in times)


def with_count(text: str, count: int) -> str:
    """The rule ending after ``count`` occurrences (its UNTIL removed)."""
    bare = rule_without_end(text)
    try:
        return parse_rule(f"{bare};COUNT={count}").text()
    except RuleError:
        return text


def rule_without_end(text: str) -> str:
    """The rule with its COUNT and UNTIL removed (text unchanged when it does not parse)."""
    try:
        parts = dict(parse_rule(text).parts)
    except RuleError:
        return text
    parts.pop("COUNT", None)
    parts.pop("UNTIL", None)
    return ParsedRule(parts).text()
