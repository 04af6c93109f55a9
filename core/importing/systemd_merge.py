"""A timer's ``OnCalendar=`` expressions joined where one expression is exactly their union.

Two expressions join when they differ in one component only (and count days from the same end,
in the same zone): ``Mon *-*-* 09:00`` and ``Tue *-*-* 09:00`` are ``Mon,Tue *-*-* 09:00``. The
joined expression may join the next one in turn. Each expression is found by its seven "all but
one component" keys, so joining n expressions costs n look-ups, not n² comparisons.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import replace
from typing import Any

from core.importing.systemd_calendar import CalendarSpec, Component

_FIELDS = ("weekdays", "years", "months", "days", "hours", "minutes", "seconds")


def _union(a: Component, b: Component) -> Component:
    if a.values is None or b.values is None:
        return Component(None, "*")
    return Component(a.values | b.values, f"{a.text},{b.text}")


def _keys(spec: CalendarSpec) -> list[Hashable]:
    """One key per component: the expression without that component. Two expressions that share
    a key differ in that component at most."""
    parts = [getattr(spec, name) for name in _FIELDS]
    return [(index, spec.from_end, spec.zone, *parts[:index], *parts[index + 1 :]) for index in range(len(_FIELDS))]


def _join(a: CalendarSpec, b: CalendarSpec) -> CalendarSpec:
    """``a`` and ``b`` (which differ in one component at most) as one expression."""
    differ = [name for name in _FIELDS if getattr(a, name) != getattr(b, name)]
    if not differ:
        return a
    source = f"{a.source}; OnCalendar={b.source}"
    if differ == ["weekdays"]:
        days = None if a.weekdays is None or b.weekdays is None else a.weekdays | b.weekdays
        return replace(a, weekdays=days, source=source)
    name = differ[0]
    changes: dict[str, Any] = {name: _union(getattr(a, name), getattr(b, name))}
    return replace(a, **changes, source=source)


def merge_calendars(specs: list[CalendarSpec]) -> list[CalendarSpec]:
    """The expressions, in their order, each joined with every later one it makes one expression
    with; no two of those returned join."""
    slots: list[CalendarSpec | None] = []
    where: dict[Hashable, int] = {}
    for spec in specs:
        joined, at = spec, len(slots)
        slots.append(None)
        while True:
            other = next((where[key] for key in _keys(joined) if key in where), None)
            if other is None:
                break
            found = slots[other]
            assert found is not None
            for key in _keys(found):
                del where[key]
            slots[other] = None
            first, second = (found, joined) if other < at else (joined, found)
            joined, at = _join(first, second), min(at, other)
        slots[at] = joined
        for key in _keys(joined):
            where[key] = at
    return [spec for spec in slots if spec is not None]
