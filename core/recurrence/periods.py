"""Business periods resumed mid-way: the winners kept so far, at a period's first run.

A schedule with ``businessPeriod`` keeps one runnable row per period, and a
period that comes back after another one keeps its earlier winner
(:func:`core.recurrence.expand.iter_rows`). So a row's status depends on every
earlier runnable row, and a listing used to start at DTSTART. A
:class:`PeriodState` is what that walk knows at the first runnable row of a
period group (``at``): the winner of every period that came before and can
still come back. An expansion seeded with it at ``at`` gives the same rows from
there on as the walk from DTSTART.

A period cannot come back once no later nominal can name it. Which nominals
name a period is read from the template: when it names the year, month, ISO
week, day, hour or minute of the nominal, a period's nominals all lie in one
such unit, and its winner is dropped once the expansion's earliest nominal is
past that unit (:func:`prunable_after`). A template that names none of them
(``{nominal:%A}``) repeats, and keeps every winner.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

#: Winners a state holds at most; past that it is not kept (the walk starts at DTSTART, as before).
MAX_WINNERS = 1000
#: Period starts a :class:`PeriodMarks` remembers (an expansion reads at most one period ahead).
_MARKS = 8

_DIRECTIVE = re.compile(r"%(?:%|[-_0^#]*\d*[EO]?([A-Za-z]))")
#: glibc's shorthands, as the directives they stand for.
_SHORTHANDS = {"F": "Ymd", "T": "HMS", "R": "HM"}


@dataclass(frozen=True)
class Kept:
    """A winner from before the resume point: what a duplicate's reason names of it."""

    occurrence_id: str
    nominal_local: str


@dataclass(frozen=True)
class PeriodState:
    """What business periods hold at ``at``, the position of a period's first runnable row:
    period -> its winner, in the order the periods were settled."""

    at: datetime
    winners: dict[str, Kept]


@dataclass
class PeriodMarks:
    """The starts of period groups an expansion went through, each with how many winners
    were settled before it; the expansion's ``winners`` grow in place, never change."""

    winners: dict[str, Kept] = field(default_factory=dict)
    starts: list[tuple[datetime, int]] = field(default_factory=list)

    def won(self, period: str, occurrence_id: str, nominal_local: str) -> None:
        """``period`` is settled for the first time, kept by that row."""
        self.winners[period] = Kept(occurrence_id, nominal_local)

    def start(self, position: datetime) -> None:
        """A period group starts at ``position``, after every winner so far."""
        self.starts.append((position, len(self.winners)))
        del self.starts[:-_MARKS]

    def state_before(self, end: datetime) -> PeriodState | None:
        """The state at the latest period start at or before ``end``; None when none is known."""
        for at, settled in reversed(self.starts):
            if at <= end:
                return PeriodState(at, dict(list(self.winners.items())[:settled]))
        return None


def _letters(template: str) -> set[str]:
    letters: set[str] = set()
    for _, name, spec, _ in string.Formatter().parse(template):
        if name is None or not spec:
            continue
        for letter in _DIRECTIVE.findall(spec):
            letters.update(_SHORTHANDS.get(letter, letter))
    letters.discard("")
    return letters


def _unit(letters: set[str]) -> str | None:
    """The smallest unit of time a template's directives pin a nominal to (None: it repeats)."""
    month = "Y" in letters and bool(letters & {"m", "b", "B", "h"})
    day = (month and bool(letters & {"d", "e"})) or {"Y", "j"} <= letters
    day = day or ({"G", "V"} <= letters and bool(letters & {"u", "w", "a", "A"}))
    if day and letters & {"H", "k"}:
        return "minute" if "M" in letters else "hour"
    for unit, pinned in (
        ("day", day),
        ("isoweek", {"G", "V"} <= letters),
        ("month", month),
        ("year", "Y" in letters),
        ("isoyear", "G" in letters),
    ):
        if pinned:
            return unit
    return None


def _next_unit(unit: str, nominal: datetime) -> datetime:
    """The first wall time after the ``unit`` that holds ``nominal``."""
    day = nominal.date()
    if unit == "minute":
        return nominal.replace(second=0, microsecond=0) + timedelta(minutes=1)
    if unit == "hour":
        return nominal.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    if unit == "day":
        after = day + timedelta(days=1)
    elif unit == "isoweek":
        after = day + timedelta(days=7 - day.weekday())
    elif unit == "month":
        after = date(day.year + day.month // 12, day.month % 12 + 1, 1)
    elif unit == "year":
        after = date(day.year + 1, 1, 1)
    else:
        after = date.fromisocalendar(day.isocalendar().year + 1, 1, 1)
    return datetime.combine(after, datetime.min.time())


def prunable_after(template: str) -> Callable[[str, datetime], bool]:
    """``gone(nominal_local, floor)``: whether a period won by the row of ``nominal_local``
    can no longer come back in an expansion whose nominals are all at or after ``floor``."""
    unit = _unit(_letters(template))

    def gone(nominal_local: str, floor: datetime) -> bool:
        if unit is None:
            return False
        try:
            return floor >= _next_unit(unit, datetime.fromisoformat(nominal_local))
        except (ValueError, OverflowError):  # past the calendar's end: keep it
            return False

    return gone


def pruned(state: PeriodState, template: str, floor: datetime) -> PeriodState | None:
    """``state`` without the winners of periods no nominal at or after ``floor`` can name;
    None when more than :data:`MAX_WINNERS` remain."""
    gone = prunable_after(template)
    winners = {period: won for period, won in state.winners.items() if not gone(won.nominal_local, floor)}
    return PeriodState(state.at, winners) if len(winners) <= MAX_WINNERS else None
