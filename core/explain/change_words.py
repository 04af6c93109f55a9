"""Words for wall times around a clock change, shared by the consequence lines
(``core.explain.consequences``) and the summary (``core.explain.summary``): the day a change is
told under, "clocks jump from 02:00 EST to 03:00 EDT", a zone's abbreviation or
its offset when the abbreviation says nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from core.recurrence.describe import join_words
from core.time.formats import fmt_clock
from core.time.zones import Transition, format_offset

_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def day_label(value: datetime) -> str:
    """``Sun 2027-03-14``: English weekday names, whatever the locale."""
    return f"{_WEEKDAYS[value.weekday()]} {value:%Y-%m-%d}"


def zone_word(abbr: str, offset: timedelta, other: str) -> str:
    """The abbreviation, or the offset when the abbreviation is numeric or says nothing new."""
    if not abbr or abbr[0] in "+-" or abbr == other:
        return "UTC" + format_offset(offset)
    return abbr


def jump_words(tr: Transition, day: datetime) -> str:
    """``clocks jump from 02:00 EST to 03:00 EDT``; a side on another date than ``day`` names its date."""
    verb = "jump" if tr.kind == "gap" else "fall back"

    def side(local: datetime, abbr: str, offset: timedelta, other: str) -> str:
        clock = fmt_clock(local) if local.date() == day.date() else f"{day_label(local)} {fmt_clock(local)}"
        return f"{clock} {zone_word(abbr, offset, other)}"

    before = side(tr.local_before, tr.abbr_before, tr.offset_before, tr.abbr_after)
    after = side(tr.local_after, tr.abbr_after, tr.offset_after, tr.abbr_before)
    return f"clocks {verb} from {before} to {after}"


def transition_day(tr: Transition) -> datetime:
    """The day a transition is told under: where its skipped or repeated wall times begin."""
    return tr.local_before if tr.kind == "gap" else tr.local_after


def wall_range(tr: Transition) -> tuple[datetime, datetime]:
    """The wall times a change touches, ``[lo, hi)``: those a gap skips, or those a fold repeats."""
    if tr.kind == "gap":
        # From the old offset's reading of the change to the new one's.
        return tr.local_before, tr.local_after
    return tr.local_after, tr.local_before


def clocks(values: Sequence[datetime], day: datetime) -> str:
    """Wall times as a short list; the date is added to those on another day."""

    def one(v: datetime) -> str:
        return fmt_clock(v) if v.date() == day.date() else f"{v:%Y-%m-%d} {fmt_clock(v)}"

    distinct = sorted(set(values))
    if len(distinct) <= 4:
        return join_words([one(v) for v in distinct])
    return f"the {len(distinct)} times from {one(distinct[0])} to {one(distinct[-1])}"
