"""Resuming a rule far from its start without walking from DTSTART.

dateutil iterates every period from DTSTART, even for ``xafter``; a minutely
rule that began a year ago costs half a million steps per lookup. A rule
without COUNT names the same times whether it starts at DTSTART or at any
later period boundary in phase with its INTERVAL, provided the parts that
dateutil derives from DTSTART (time of day, weekday, month day, month) are
written out. :func:`rebased_start` finds such a boundary at or before a given
time, and :func:`explicit_parts` writes the derived parts out.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from core.recurrence.rules import WEEKDAYS, ParsedRule

_DAY_PICKERS = ("BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY")
_FIXED_STEPS = {
    "MINUTELY": timedelta(minutes=1),
    "HOURLY": timedelta(hours=1),
    "DAILY": timedelta(days=1),
    "WEEKLY": timedelta(weeks=1),
}


def can_rebase(parsed: ParsedRule) -> bool:
    """COUNT counts from DTSTART, so a counted rule must be walked from its start."""
    return "COUNT" not in parsed.parts


def explicit_parts(parsed: ParsedRule, start: datetime) -> dict[str, str]:
    """The rule's parts plus those dateutil would otherwise take from ``start``."""
    parts = {k: v for k, v in parsed.parts.items() if k not in ("COUNT", "UNTIL")}
    freq = parsed.freq
    if not any(p in parts for p in _DAY_PICKERS):
        if freq == "YEARLY":
            parts.setdefault("BYMONTH", str(start.month))
            parts["BYMONTHDAY"] = str(start.day)
        elif freq == "MONTHLY":
            parts["BYMONTHDAY"] = str(start.day)
        elif freq == "WEEKLY":
            parts["BYDAY"] = WEEKDAYS[start.weekday()]
    if freq in ("YEARLY", "MONTHLY", "WEEKLY", "DAILY"):
        parts.setdefault("BYHOUR", str(start.hour))
    if freq in ("YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY"):
        parts.setdefault("BYMINUTE", str(start.minute))
    parts.setdefault("BYSECOND", str(start.second))
    return parts


def rebased_start(parsed: ParsedRule, start: datetime, after: datetime) -> datetime:
    """A period boundary in phase with the rule, at or before ``after`` (never before ``start``)."""
    if after <= start:
        return start
    interval = int(parsed.parts.get("INTERVAL", "1"))
    freq = parsed.freq
    if freq in _FIXED_STEPS:
        step = _FIXED_STEPS[freq] * interval
        periods = (after - start) // step
        # One period early: a period's times can start before its boundary instant
        # (a weekly rule's Monday when it started on a Wednesday).
        return start + max(periods - 1, 0) * step
    if freq == "MONTHLY":
        months = (after.year - start.year) * 12 + (after.month - start.month)
        k = max(months // interval - 1, 0) * interval
        total = start.year * 12 + (start.month - 1) + k
        return datetime(total // 12, total % 12 + 1, 1)
    years = (after.year - start.year) // interval
    k = max(years - 1, 0) * interval
    return datetime(start.year + k, 1, 1)
