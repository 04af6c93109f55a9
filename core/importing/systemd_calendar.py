"""systemd's calendar expressions (``OnCalendar=``, systemd.time(7)) read, and the RFC 5545 rule
that runs at exactly the same wall-clock times, or the reason there is none.

An expression is ``[WEEKDAYS] [[YYYY-]MM-DD] [HH:MM[:SS]] [ZONE]``; a part left out means every
weekday, every day, ``00:00:00``, and the machine's zone. Each date and time component is ``*`` or
a list of values, ``A..B`` ranges and ``A/STEP`` or ``A..B/STEP`` repetitions; ``MM~DD`` counts days
from the end of the month (``~01`` is the last day). Weekday and date must BOTH match. The
shorthands are systemd.time(7)'s: ``minutely`` ``*-*-* *:*:00``, ``hourly`` ``*-*-* *:00:00``,
``daily`` ``*-*-* 00:00:00``, ``monthly`` ``*-*-01 00:00:00``, ``weekly`` ``Mon *-*-* 00:00:00``,
``yearly``/``annually`` ``*-01-01 00:00:00``, ``quarterly`` ``*-01,04,07,10-01 00:00:00``,
``semiannually``/``semi-annually`` ``*-01,07-01 00:00:00``.

Refused with the reason: fractions of a second, a second repeated every second (Tidemark's
finest step is a minute), years that are not one unbroken run (no rule part holds them), and
an expression that never runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from core.errors import UserError, ZoneError
from core.importing.input_text import UNIT_BLANKS, split_words
from core.time.zones import check_zone_name

_WEEKDAY_NAMES = (
    ("mon", "monday"),
    ("tue", "tuesday"),
    ("wed", "wednesday"),
    ("thu", "thursday"),
    ("fri", "friday"),
    ("sat", "saturday"),
    ("sun", "sunday"),
)
_WEEKDAY_SHORT = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_RFC_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
SHORTHANDS = {
    "minutely": "*-*-* *:*:00",
    "hourly": "*-*-* *:00:00",
    "daily": "*-*-* 00:00:00",
    "monthly": "*-*-01 00:00:00",
    "weekly": "Mon *-*-* 00:00:00",
    "yearly": "*-01-01 00:00:00",
    "annually": "*-01-01 00:00:00",
    "quarterly": "*-01,04,07,10-01 00:00:00",
    "semiannually": "*-01,07-01 00:00:00",
    "semi-annually": "*-01,07-01 00:00:00",
}
#: Each component: its name, lowest and highest value.
_YEAR, _MONTH, _DAY = ("year", 1970, 2199), ("month", 1, 12), ("day", 1, 31)
_HOUR, _MINUTE, _SECOND = ("hour", 0, 23), ("minute", 0, 59), ("second", 0, 59)
_MONTH_LENGTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_NUMBER = re.compile(r"^[0-9]+$")


class CalendarError(UserError):
    """A calendar expression systemd would refuse, or one no rule can hold; the message says why."""


@dataclass(frozen=True)
class Component:
    """The values one date or time component takes (None: every value, ``*``), as written."""

    values: frozenset[int] | None
    text: str
    #: Seconds with a fraction (``1.5``): systemd reads them, no rule holds them (``values`` floored).
    fraction: bool = False

    def has(self, value: int) -> bool:
        return self.values is None or value in self.values


@dataclass(frozen=True)
class CalendarSpec:
    """One calendar expression read: what each component takes, and its zone when it names one."""

    source: str
    weekdays: frozenset[int] | None  # 0 = Monday .. 6 = Sunday; None: every weekday
    years: Component
    months: Component
    days: Component
    from_end: bool  # the days count from the end of the month (``~``)
    hours: Component
    minutes: Component
    seconds: Component
    zone: str | None

    @property
    def normalized(self) -> str:
        """The expression as ``systemd-analyze calendar`` prints it (its "Normalized form")."""
        words = []
        if self.weekdays is not None:
            words.append(weekday_text(self.weekdays))
        words.append(f"{self.years.text}-{self.months.text}{'~' if self.from_end else '-'}{self.days.text}")
        words.append(f"{self.hours.text}:{self.minutes.text}:{self.seconds.text}")
        if self.zone is not None:
            words.append(self.zone)
        return " ".join(words)

    def day_matches(self, day: date) -> bool:
        if self.weekdays is not None and day.weekday() not in self.weekdays:
            return False
        if not (self.years.has(day.year) and self.months.has(day.month)):
            return False
        if self.days.values is None:
            return True
        if self.from_end:
            length = _length(day.year, day.month)
            return length + 1 - day.day in self.days.values
        return day.day in self.days.values

    def matches(self, wall: datetime) -> bool:
        """Whether the wall-clock time is one the expression names (to the second)."""
        return (
            self.hours.has(wall.hour)
            and self.minutes.has(wall.minute)
            and self.seconds.has(wall.second)
            and self.day_matches(wall.date())
        )


def _length(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return _MONTH_LENGTH[month - 1]


def weekday_text(days: frozenset[int]) -> str:
    """``Mon..Fri,Sun``: runs of three or more days as ranges, as systemd writes them."""
    parts, ordered, i = [], sorted(days), 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{_WEEKDAY_SHORT[ordered[i]]}..{_WEEKDAY_SHORT[ordered[j]]}")
        else:
            parts += [_WEEKDAY_SHORT[d] for d in ordered[i : j + 1]]
        i = j + 1
    return ",".join(parts)


def _weekday(name: str, text: str) -> int:
    low = name.lower()
    for index, names in enumerate(_WEEKDAY_NAMES):
        if low in names:
            return index
    raise CalendarError(f"{name!r} is not a weekday (Mon, Tue, ... or Monday, Tuesday, ...)")


def _weekdays(token: str, text: str) -> frozenset[int]:
    days: set[int] = set()
    for item in token.split(","):
        if not item:
            continue
        first, sep, last = item.partition("..")
        if not sep and "-" in item:  # systemd still reads the old Mon-Fri
            first, sep, last = item.partition("-")
        a = _weekday(first, text)
        b = _weekday(last, text) if sep else a
        if b < a:
            raise CalendarError(f"the weekday range {item!r} runs backwards (systemd refuses it)")
        days |= set(range(a, b + 1))
    if not days:
        raise CalendarError("no weekday before the comma")
    return frozenset(days)


def _number(word: str, what: tuple[str, int, int], text: str) -> int:
    name, low, high = what
    if "." in word:
        raise CalendarError(f"{name} {word!r}: only seconds can have a fraction")
    if not _NUMBER.match(word):
        raise CalendarError(f"{name} {word!r} is not a number")
    value = int(word)
    if name == "year" and len(word) == 2:
        value += 2000 if value < 70 else 1900
    if not low <= value <= high:
        raise CalendarError(f"{name} {value} is out of range {low}-{high}")
    return value


def _fraction(word: str, text: str) -> Component:
    """Seconds written with a fraction (``1.5``, ``0..1.5``): read as systemd reads them and written as it
    prints them (``01.500000``), so that the report can name them; :func:`calendar_rule` refuses them."""

    def number(part: str) -> str:
        whole, _, fraction = part.partition(".")
        if not _NUMBER.match(whole) or (fraction and not _NUMBER.match(fraction)) or int(whole) > 59:
            raise CalendarError(f"second {word!r} is not a number of seconds")
        return f"{int(whole):02d}" + (f".{fraction[:6]:0<6}" if fraction else "")

    items = [re.split(r"(\.\.|/)", item) for item in word.split(",")]
    shown = ",".join("".join(part if part in ("..", "/") else number(part) for part in item) for item in items)
    floors = {int(float(part)) for item in items for part in item if part not in ("..", "/")}
    return Component(frozenset(floors), shown, fraction=True)


def _pad(value: int, name: str) -> str:
    return str(value) if name == "year" else f"{value:02d}"


def _item_text(item: tuple[int, int | None, int | None], name: str) -> str:
    first, last, step = item
    if last is not None and step is not None:
        last = first + (last - first) // step * step  # systemd names the last value the range reaches
    text = _pad(first, name)
    if last is not None and last != first:
        text += f"..{_pad(last, name)}"
    return text + (f"/{step}" if step is not None else "")


def _component(word: str, what: tuple[str, int, int], text: str, *, from_end: bool = False) -> Component:
    """One component: ``*``, or a list of ``N``, ``A..B``, ``A/STEP`` and ``A..B/STEP``; its text
    is systemd's (items sorted, each as written)."""
    name, _, high = what
    if word == "*":
        return Component(None, "*")
    if not word or any(not item for item in word.split(",")):
        raise CalendarError(f"{name} {word!r} has an empty item")
    values: set[int] = set()
    items: set[tuple[int, int | None, int | None]] = set()
    for item in word.split(","):
        body, slash, step_text = item.partition("/")
        first_text, dots, last_text = body.partition("..")
        if first_text == "*":
            raise CalendarError(f"{name} {item!r}: systemd repeats from a value, not from *; write 00/STEP")
        first = _number(first_text, what, text)
        last = _number(last_text, what, text) if dots else None
        if last is not None and last < first:
            raise CalendarError(f"{name} range {body!r} runs backwards")
        step = _number(step_text, ("step", 1, 10_000), text) if slash else None
        if step is not None and last is None and name == "year":
            raise CalendarError(f"years repeated without end ({item!r}): no rule part holds years")
        end = last if last is not None else (high if step is not None else first)
        if step is not None and from_end and last is None:  # ~7/2: 7th, 5th, 3rd, last day from the end
            values |= set(range(first, 0, -step))
        else:
            values |= set(range(first, end + 1, step or 1))
        items.add((first, last, step))
    ordered = sorted(items, key=lambda i: (i[0], i[1] if i[1] is not None else -1, i[2] or 0))
    return Component(frozenset(values), ",".join(_item_text(i, name) for i in ordered))


def _date(token: str, text: str) -> tuple[Component, Component, Component, bool]:
    from_end = "~" in token
    head, _, day_text = token.rpartition("~" if from_end else "-")
    parts = head.split("-")
    if len(parts) > 2 or (from_end and "~" in head):
        raise CalendarError(f"the date {token!r} is not [YYYY-]MM-DD or [YYYY-]MM~DD")
    year_text = parts[0] if len(parts) == 2 else "*"
    month_text = parts[-1]
    if day_text == "*" and from_end:
        from_end = False  # systemd reads *~* as *-*
    years = _component(year_text, _YEAR, text)
    months = _component(month_text, _MONTH, text)
    days = _component(day_text, _DAY, text, from_end=from_end)
    return years, months, days, from_end


def _time(token: str, text: str) -> tuple[Component, Component, Component]:
    parts = token.split(":")
    if len(parts) not in (2, 3):
        raise CalendarError(f"the time {token!r} is not HH:MM or HH:MM:SS")
    seconds = parts[2] if len(parts) == 3 else "00"
    if "." in seconds:
        return _component(parts[0], _HOUR, text), _component(parts[1], _MINUTE, text), _fraction(seconds, text)
    return _component(parts[0], _HOUR, text), _component(parts[1], _MINUTE, text), _component(seconds, _SECOND, text)


def _zone(word: str, text: str) -> str:
    if word.upper() == "UTC":
        return "UTC"
    try:
        return check_zone_name(word)
    except ZoneError:
        raise CalendarError(f"{word!r} is neither a date, a time nor a time zone") from None


def _is_zone(word: str) -> bool:
    try:
        _zone(word, word)
    except CalendarError:
        return False
    return True


def parse_calendar(text: str) -> CalendarSpec:
    """Read an ``OnCalendar=`` expression; a mistake is a :class:`CalendarError` saying what is wrong."""
    source = " ".join(split_words(text, UNIT_BLANKS))
    if not source:
        raise CalendarError("an empty calendar expression")
    words = source.split(" ")
    zone: str | None = None
    last = words[-1]
    # A zone ends the expression; America/Port-au-Prince holds a dash and is still one.
    maybe_zone = ":" not in last and last.lower() not in SHORTHANDS
    if len(words) > 1 and maybe_zone and (_is_zone(last) or not any(sign in last for sign in "-~")):
        zone = _zone(words.pop(), source)
    if len(words) == 1 and words[0].lower() in SHORTHANDS:
        words = SHORTHANDS[words[0].lower()].split(" ")
    weekdays: frozenset[int] | None = None
    if words and words[0][:1].isalpha():
        weekdays = _weekdays(words.pop(0), source)
        if len(weekdays) == 7:
            weekdays = None
    years = months = days = Component(None, "*")
    from_end = False
    hours = minutes = Component(frozenset({0}), "00")
    seconds = Component(frozenset({0}), "00")
    if words and ":" not in words[0]:
        date_word = words.pop(0)
        if "-" not in date_word and "~" not in date_word:
            raise CalendarError(f"{date_word!r} is neither a date (MM-DD) nor a time (HH:MM)")
        years, months, days, from_end = _date(date_word, source)
    if words:
        hours, minutes, seconds = _time(words.pop(0), source)
    if words:
        raise CalendarError(f"{' '.join(words)!r} follows the time; only a time zone may")
    spec = CalendarSpec(source, weekdays, years, months, days, from_end, hours, minutes, seconds, zone)
    if not any(_day_exists(spec, month) for month in range(1, 13)):
        raise CalendarError("never runs: no month has its day")
    return spec


def _day_exists(spec: CalendarSpec, month: int) -> bool:
    if not spec.months.has(month):
        return False
    return spec.days.values is None or any(day <= _MONTH_LENGTH[month - 1] for day in spec.days.values)


# --- the rule ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CalendarRule:
    """The rule and the years it is bounded to (None: every year)."""

    rule: str
    first_year: int | None
    last_year: int | None


def _join(values: frozenset[int], negative: bool = False) -> str:
    ordered = sorted(values, reverse=negative)
    return ",".join(str(-v if negative else v) for v in ordered)


def calendar_rule(spec: CalendarSpec) -> CalendarRule:
    """The RFC 5545 rule that runs at exactly the expression's wall-clock times; refused with the
    reason where none does (a :class:`CalendarError`)."""
    if spec.seconds.fraction:
        raise CalendarError(f"runs at fractions of a second ({spec.seconds.text}); Tidemark runs on whole seconds")
    if spec.seconds.values is None or len(spec.seconds.values) == 60:
        raise CalendarError("runs every second; Tidemark runs a schedule at most once a minute")
    first_year = last_year = None
    if spec.years.values is not None:
        years = sorted(spec.years.values)
        if years != list(range(years[0], years[-1] + 1)):
            raise CalendarError(
                f"the years {spec.years.text} are not one unbroken run; a rule bounds years only by its start and end"
            )
        first_year, last_year = years[0], years[-1]
    every_minute = spec.minutes.values is None or len(spec.minutes.values) == 60
    every_hour = spec.hours.values is None or len(spec.hours.values) == 24
    only_weekdays = (
        spec.weekdays is not None and len(spec.weekdays) < 7 and spec.days.values is None and spec.months.values is None
    )
    if every_minute:
        freq = "MINUTELY"
    elif every_hour:
        freq = "HOURLY"
    elif only_weekdays:
        freq = "WEEKLY"
    elif spec.days.values is not None and spec.weekdays is None:
        freq = "MONTHLY"
    else:
        freq = "DAILY"
    parts = [f"FREQ={freq}"]
    if spec.months.values is not None and len(spec.months.values) < 12:
        parts.append(f"BYMONTH={_join(spec.months.values)}")
    if spec.days.values is not None:
        parts.append(f"BYMONTHDAY={_join(spec.days.values, negative=spec.from_end)}")
    if spec.weekdays is not None and len(spec.weekdays) < 7:
        parts.append("BYDAY=" + ",".join(_RFC_DAYS[d] for d in sorted(spec.weekdays)))
    if not every_hour:
        assert spec.hours.values is not None
        parts.append(f"BYHOUR={_join(spec.hours.values)}")
    if not every_minute:
        assert spec.minutes.values is not None
        parts.append(f"BYMINUTE={_join(spec.minutes.values)}")
    if spec.seconds.values != frozenset({0}):
        parts.append(f"BYSECOND={_join(spec.seconds.values)}")
    return CalendarRule(";".join(parts), first_year, last_year)


# --- when systemd runs it ------------------------------------------------------------------


def _first_reading(instant: datetime, zone: ZoneInfo) -> bool:
    local = instant.astimezone(zone)
    return not (local.fold == 1 and local.replace(fold=0).utcoffset() != local.utcoffset())


def elapses(calendar: CalendarSpec, zone: ZoneInfo, lo: datetime, hi: datetime) -> list[datetime]:
    """The instants in ``[lo, hi)`` (``lo`` a whole minute) at which systemd elapses the
    expression on ``zone``'s clock (a zone the expression names is its own).

    As systemd 252 computes them (``calendar_spec_next_usec``): the expression is matched on the
    wall clock; a wall time the clocks skip does not exist, so it never runs; after a run the
    next is the next matching wall time, so a wall time the clocks show twice runs at its first
    reading only. The tests check this against ``systemd-analyze calendar`` at both changes.
    """
    step = timedelta(minutes=1) if calendar.seconds.values == frozenset({0}) else timedelta(seconds=1)
    runs, at = [], lo
    while at < hi:
        wall = at.astimezone(zone).replace(tzinfo=None)
        if calendar.matches(wall) and _first_reading(at, zone):
            runs.append(at)
        at += step
    return runs
