"""Rules in plain words: ``FREQ=WEEKLY;BYDAY=MO,FR;BYHOUR=9`` becomes
"Every Monday and Friday at 09:00".

The wording follows RFC 5545's defaults: parts a rule leaves out (the hour, the
minute, the day of the month) come from ``start``. Combinations too unusual to
say well fall back to quoting the rule, never to a wrong sentence.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from core.recurrence.rules import WEEKDAYS, ParsedRule, number_runs
from core.time.formats import fmt_clock

DAY_NAMES = {
    "MO": "Monday",
    "TU": "Tuesday",
    "WE": "Wednesday",
    "TH": "Thursday",
    "FR": "Friday",
    "SA": "Saturday",
    "SU": "Sunday",
}
#: English names, independent of the process locale (the GUI may set one).
MONTH_NAMES = (
    "",
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_WORKWEEK = frozenset(WEEKDAYS[:5])
_WEEKEND = frozenset(WEEKDAYS[5:])
_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}
#: Clock times listed one by one up to this many; more are summarised.
_MAX_LISTED_TIMES = 6
_TIME_OF_DAY_FREQS = ("DAILY", "WEEKLY", "MONTHLY", "YEARLY")


class _Unsupported(Exception):
    """A combination of parts this module does not put into words."""


def describe_rule(parsed: ParsedRule, start: datetime, *, bounds: bool = True) -> str:
    """The rule as one plain-English phrase, e.g. ``"Every 2 weeks on Sunday at 02:30"``.

    ``start`` is the schedule's local DTSTART: it supplies what the rule leaves
    out, as in RFC 5545. COUNT and UNTIL are appended (``", 10 times"``) unless
    ``bounds`` is false; :func:`describe_bounds` gives them on their own.
    """
    try:
        text = _describe(parsed, start)
    except _Unsupported:
        text = f"Following the rule {parsed.text()}"
    return text + (describe_bounds(parsed) if bounds else "")


# --- small word helpers --------------------------------------------------------------


def join_words(items: Sequence[str], conjunction: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + f" {conjunction} " + items[-1]


def ordinal(n: int) -> str:
    """``first``, ``second``, ``last``, ``second-to-last``, ``21st``..."""
    if n < 0:
        return "last" if n == -1 else f"{ordinal(-n)}-to-last"
    if n in _ORDINALS:
        return _ORDINALS[n]
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _ranges(numbers: Iterable[int]) -> list[str]:
    """Runs of consecutive numbers as ``9–17``; lone numbers as they are."""
    return [str(a) if a == b else f"{a}–{b}" for a, b in number_runs(numbers)]


def _codes(parsed: ParsedRule) -> list[str]:
    return sorted({code for _, code in parsed.byday()}, key=WEEKDAYS.index)


def _every_days(codes: Sequence[str]) -> str:
    """What follows "Every": ``Monday and Friday``, ``weekday``, ``day``."""
    chosen = frozenset(codes)
    if len(chosen) == 7:
        return "day"
    if chosen == _WORKWEEK:
        return "weekday"
    if chosen == _WEEKEND:
        return "Saturday and Sunday"
    return join_words([DAY_NAMES[c] for c in codes])


def _on_days(codes: Sequence[str]) -> str:
    """What follows "on": ``Monday and Friday``, ``weekdays``, ``every day``."""
    chosen = frozenset(codes)
    if len(chosen) == 7:
        return "every day"
    if chosen == _WORKWEEK:
        return "weekdays"
    return join_words([DAY_NAMES[c] for c in codes])


def _one_of_days(codes: Sequence[str]) -> str:
    """A single day picked from a set: ``weekday``, ``weekend day``, ``Monday or Friday``."""
    chosen = frozenset(codes)
    if len(chosen) == 7:
        return "day"
    if chosen == _WORKWEEK:
        return "weekday"
    if chosen == _WEEKEND:
        return "weekend day"
    return join_words([DAY_NAMES[c] for c in codes], "or")


def _month_names(months: Sequence[int]) -> str:
    return join_words([MONTH_NAMES[m] for m in sorted(set(months))])


def _month_days(days: Sequence[int]) -> str:
    """``day 31``, ``days 1 and 15``, ``the last day``, ``day 1 and the last day``."""
    positive = sorted(d for d in days if d > 0)
    negative = sorted((d for d in days if d < 0), reverse=True)
    parts: list[str] = []
    if positive:
        parts.append(("day " if len(positive) == 1 else "days ") + join_words([str(d) for d in positive]))
    parts.extend(f"the {ordinal(d)} day" for d in negative)
    return join_words(parts)


# --- times of day -------------------------------------------------------------------


def _clock_parts(parsed: ParsedRule, start: datetime) -> tuple[list[int], list[int], list[int]]:
    """Hours, minutes and seconds the rule fires at, with RFC 5545's defaults from start."""
    freq = parsed.freq
    hours = parsed.ints("BYHOUR") or ([start.hour] if freq in _TIME_OF_DAY_FREQS else [])
    minutes = parsed.ints("BYMINUTE") or ([start.minute] if freq != "MINUTELY" else [])
    seconds = parsed.ints("BYSECOND") or [start.second]
    return sorted(set(hours)), sorted(set(minutes)), sorted(set(seconds))


def _minute_marks(minutes: Sequence[int], seconds: Sequence[int]) -> list[str]:
    with_seconds = any(seconds)
    return [f":{m:02d}" + (f":{s:02d}" if with_seconds else "") for m in minutes for s in seconds]


def _at_times(hours: Sequence[int], minutes: Sequence[int], seconds: Sequence[int]) -> str:
    """``at 09:00``, ``at 09:00 and 17:00``, ``at :00 and :30 past hours 9–17``."""
    if len(hours) * len(minutes) * len(seconds) <= _MAX_LISTED_TIMES:
        times = [fmt_clock(datetime(2000, 1, 1, h, m, s)) for h in hours for m in minutes for s in seconds]
        return "at " + join_words(times)
    marks = join_words(_minute_marks(minutes, seconds))
    return f"at {marks} past hours {join_words(_ranges(hours))}"


# --- filters that only narrow -------------------------------------------------------


def _filters(parsed: ParsedRule, *, days: bool = True, months: bool = True, month_days: bool = True) -> str:
    out = ""
    if days and parsed.byday():
        if any(n is not None for n, _ in parsed.byday()):
            raise _Unsupported
        out += f", on {_on_days(_codes(parsed))}"
    if month_days and parsed.ints("BYMONTHDAY"):
        out += f", on {_month_days(parsed.ints('BYMONTHDAY'))} of the month"
    if months and parsed.ints("BYMONTH"):
        out += f", in {_month_names(parsed.ints('BYMONTH'))}"
    return out


def _refuse(parsed: ParsedRule, *names: str) -> None:
    if any(name in parsed.parts for name in names):
        raise _Unsupported


# --- one function per frequency ------------------------------------------------------


def _describe(parsed: ParsedRule, start: datetime) -> str:
    n = int(parsed.parts.get("INTERVAL", "1"))
    freq = parsed.freq
    if freq == "MINUTELY":
        return _minutely(parsed, start, n)
    if freq == "HOURLY":
        return _hourly(parsed, start, n)
    if freq == "DAILY":
        return _daily(parsed, start, n)
    if freq == "WEEKLY":
        return _weekly(parsed, start, n)
    if freq == "MONTHLY":
        return _monthly(parsed, start, n)
    return _yearly(parsed, start, n)


def _minutely(parsed: ParsedRule, start: datetime, n: int) -> str:
    _refuse(parsed, "BYSETPOS", "BYYEARDAY", "BYWEEKNO")
    _, _, seconds = _clock_parts(parsed, start)
    text = "Every minute" if n == 1 else f"Every {n} minutes"
    if any(seconds):
        text += f" at second {join_words([str(s) for s in seconds])}"
    if parsed.ints("BYMINUTE"):
        text += f", in minutes {join_words(_ranges(parsed.ints('BYMINUTE')))}"
    if parsed.ints("BYHOUR"):
        text += f", during hours {join_words(_ranges(parsed.ints('BYHOUR')))}"
    return text + _filters(parsed)


def _hourly(parsed: ParsedRule, start: datetime, n: int) -> str:
    _refuse(parsed, "BYSETPOS", "BYYEARDAY", "BYWEEKNO")
    hours, minutes, seconds = _clock_parts(parsed, start)
    if n == 1 and hours:
        # Every hour, but only some hours: that is a list of clock times each day.
        return f"Every day {_at_times(hours, minutes, seconds)}" + _filters(parsed)
    text = "Every hour" if n == 1 else f"Every {n} hours"
    text += " at " + join_words(_minute_marks(minutes, seconds))
    if hours:
        text += f", during hours {join_words(_ranges(hours))}"
    return text + _filters(parsed)


def _daily(parsed: ParsedRule, start: datetime, n: int) -> str:
    _refuse(parsed, "BYSETPOS", "BYYEARDAY", "BYWEEKNO")
    at = _at_times(*_clock_parts(parsed, start))
    codes = _codes(parsed)
    if codes and n == 1:
        if any(k is not None for k, _ in parsed.byday()):
            raise _Unsupported
        return f"Every {_every_days(codes)} {at}" + _filters(parsed, days=False)
    text = "Every day" if n == 1 else f"Every {n} days"
    return f"{text} {at}" + _filters(parsed)


def _weekly(parsed: ParsedRule, start: datetime, n: int) -> str:
    _refuse(parsed, "BYSETPOS", "BYYEARDAY", "BYWEEKNO", "BYMONTHDAY")
    at = _at_times(*_clock_parts(parsed, start))
    codes = _codes(parsed) or [WEEKDAYS[start.weekday()]]
    if n == 1:
        return f"Every {_every_days(codes)} {at}" + _filters(parsed, days=False)
    return f"Every {n} weeks on {_on_days(codes)} {at}" + _filters(parsed, days=False)


def _monthly(parsed: ParsedRule, start: datetime, n: int) -> str:
    _refuse(parsed, "BYYEARDAY", "BYWEEKNO")
    at = _at_times(*_clock_parts(parsed, start))
    of = "of every month" if n == 1 else f"of every {n} months"
    days = parsed.ints("BYMONTHDAY")
    byday = parsed.byday()
    positions = parsed.ints("BYSETPOS")
    numbered = [(k, c) for k, c in byday if k is not None]
    plain = [c for k, c in byday if k is None]
    months = _filters(parsed, days=False, month_days=False)
    if positions:
        if days or numbered or not plain:
            raise _Unsupported
        picks = join_words([ordinal(p) for p in positions])
        return f"On the {picks} {_one_of_days(_codes(parsed))} {of} {at}" + months
    if numbered:
        if plain or days:
            raise _Unsupported
        picks = join_words([f"the {ordinal(k)} {DAY_NAMES[c]}" for k, c in numbered])
        return f"On {picks} {of} {at}" + months
    if days:
        when = f", when it is a {_one_of_days(_codes(parsed))}" if plain else ""
        return f"On {_month_days(days)} {of} {at}" + when + months
    if plain:
        lead = f"Every {_every_days(_codes(parsed))}" if n == 1 else f"On every {_one_of_days(_codes(parsed))} {of}"
        return f"{lead} {at}" + months
    return f"On day {start.day} {of} {at}" + months


def _yearly(parsed: ParsedRule, start: datetime, n: int) -> str:
    at = _at_times(*_clock_parts(parsed, start))
    every = "Every year" if n == 1 else f"Every {n} years"
    months = parsed.ints("BYMONTH")
    days = parsed.ints("BYMONTHDAY")
    byday = parsed.byday()
    positions = parsed.ints("BYSETPOS")
    numbered = [(k, c) for k, c in byday if k is not None]
    plain = [c for k, c in byday if k is None]
    where = f"of {_month_names(months)}" if months else "of the year"
    if parsed.ints("BYYEARDAY"):
        _refuse(parsed, "BYSETPOS", "BYWEEKNO", "BYMONTHDAY", "BYDAY", "BYMONTH")
        return f"{every} on {_month_days(parsed.ints('BYYEARDAY'))} of the year {at}"
    if parsed.ints("BYWEEKNO"):
        _refuse(parsed, "BYSETPOS", "BYMONTHDAY", "BYMONTH")
        if numbered:
            raise _Unsupported
        weeks = f"week {join_words(_ranges(parsed.ints('BYWEEKNO')))}"
        on = f"on {_on_days(plain)} of {weeks}" if plain else f"every day of {weeks}"
        return f"{every}, {on}, {at}"
    if positions:
        if days or numbered or not plain:
            raise _Unsupported
        picks = join_words([ordinal(p) for p in positions])
        return f"{every} on the {picks} {_one_of_days(_codes(parsed))} {where} {at}"
    if numbered:
        if plain or days:
            raise _Unsupported
        picks = join_words([f"the {ordinal(k)} {DAY_NAMES[c]}" for k, c in numbered])
        return f"{every} on {picks} {where} {at}"
    if plain and not days:
        lead = f"Every {_every_days(_codes(parsed))}" if n == 1 else f"{every}, every {_one_of_days(_codes(parsed))}"
        return f"{lead} {at}" + (f", in {_month_names(months)}" if months else "")
    when = f", when it is a {_one_of_days(_codes(parsed))}" if plain else ""
    return f"{every} on {_dates(days or [start.day], months or [start.month])} {at}" + when


def _dates(days: Sequence[int], months: Sequence[int]) -> str:
    """``29 February``, ``1 January and 1 July``, ``1 and 15 March``, ``the last day of February``."""
    months = sorted(set(months))
    if all(d > 0 for d in days):
        ordered = sorted(set(days))
        if len(ordered) == 1:
            return join_words([f"{ordered[0]} {MONTH_NAMES[m]}" for m in months])
        if len(months) == 1:
            return f"{join_words([str(d) for d in ordered])} {MONTH_NAMES[months[0]]}"
    return f"{_month_days(days)} of {_month_names(months)}"


def describe_bounds(parsed: ParsedRule) -> str:
    """COUNT or UNTIL as a trailing clause: ``", 10 times"``, ``", until 2027-12-31"``, or ``""``."""
    if "COUNT" in parsed.parts:
        count = int(parsed.parts["COUNT"])
        return ", once" if count == 1 else f", {count} times"
    value = parsed.parts.get("UNTIL")
    if value is None:
        return ""
    # parse_rule has checked the form: YYYYMMDD, optionally THHMMSS and Z.
    day = f"{value[0:4]}-{value[4:6]}-{value[6:8]}"
    if "T" not in value:
        return f", until {day}"
    clock = f"{value[9:11]}:{value[11:13]}" + (f":{value[13:15]}" if value[13:15] != "00" else "")
    if value.endswith("Z"):
        return f", until {day} {clock} UTC"
    return f", until {day}" if clock == "23:59:59" else f", until {day} {clock}"
