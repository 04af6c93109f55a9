"""What the designer's "Business days" section reads from and writes to the document's mapping,
without Qt and without the holiday data (the panel's heading and the missing-policy check use it
before the section is ever opened).

The keys are the spec's (docs/spec.md): ``businessCalendar`` with ``holidays``, ``weekend``,
``closed`` and ``open``, and ``holidayPolicy``, which the core requires with a calendar: turning
the section on never chooses a policy for the person.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from core.enums import HolidayPolicy
from core.spec.model import WEEKDAY_CODES

CALENDAR = "businessCalendar"
POLICY = "holidayPolicy"
#: The weekend a calendar starts with (the spec's default).
DEFAULT_WEEKEND = ["SA", "SU"]
#: The list keys of a calendar, in the spec's order.
LIST_KEYS = ("holidays", "weekend", "closed", "open")

#: (value, words in the combo, what it means).
POLICY_CHOICES = (
    (HolidayPolicy.SKIP.value, "Skip", "A run that falls on a closed day does not happen."),
    (
        HolidayPolicy.NEXT_BUSINESS_DAY.value,
        "Next business day",
        "A run that falls on a closed day happens on the next business day, at the same time.",
    ),
    (
        HolidayPolicy.PREVIOUS_BUSINESS_DAY.value,
        "Previous business day",
        "A run that falls on a closed day happens on the previous business day, at the same time.",
    ),
)


def calendar_of(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The document's ``businessCalendar`` mapping (a copy), or None when the section is off."""
    value = data.get(CALENDAR)
    if value is None:
        return None
    return dict(value) if isinstance(value, Mapping) else {}


def items(value: Any) -> list[str]:
    """A stored list as text items (dates as ``2027-12-24``)."""
    if not isinstance(value, list):
        return []
    return [v.isoformat() if isinstance(v, (date, datetime)) else str(v) for v in value]


def weekend_of(calendar: Mapping[str, Any]) -> list[str]:
    """The weekend a calendar means: its own list, else the default."""
    return items(calendar["weekend"]) if "weekend" in calendar else list(DEFAULT_WEEKEND)


def with_list(calendar: Mapping[str, Any], key: str, values: list[str]) -> dict[str, Any]:
    """``calendar`` with ``key`` set to ``values``: an empty holidays, closed or open list is left out,
    unless the calendar would be left empty (it stays on, as ``{key: []}``). The weekend is always written."""
    out = dict(calendar)
    if values or key == "weekend":
        out[key] = list(values)
    else:
        out.pop(key, None)
        if not out:
            out[key] = []
    return out


def in_week_order(days: list[str]) -> list[str]:
    """Weekday codes Monday first, each once."""
    return [code for code in WEEKDAY_CODES if code in days]


def added_date(existing: list[str], day: str) -> list[str]:
    """``existing`` with ``day`` in date order (appended when the list is not in order), kept once."""
    if day in existing:
        return list(existing)
    if existing == sorted(existing):
        return sorted([*existing, day])
    return [*existing, day]


def policy_words(value: Any) -> str | None:
    """The combo's words for a stored policy, or None."""
    return next((words for v, words, _m in POLICY_CHOICES if v == value), None)


def heading_detail(data: Mapping[str, Any]) -> str:
    """What the folded heading says beside "Business days": off, or the codes and the policy."""
    calendar = calendar_of(data)
    if calendar is None:
        return "off · public holidays, weekend, closed dates"
    codes = ", ".join(items(calendar.get("holidays"))) or "no public holidays"
    words = policy_words(data.get(POLICY))
    policy = words.lower() if words else "closed days: not chosen yet"
    return f"{codes} · {policy}"
