"""RFC 5545 RRULE text: parsed part by part with messages that name the part,
then handed to python-dateutil for expansion on the floating local wall clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from dateutil import rrule as du

from core.errors import UserError
from core.os_text import shown

FREQS = {
    "YEARLY": du.YEARLY,
    "MONTHLY": du.MONTHLY,
    "WEEKLY": du.WEEKLY,
    "DAILY": du.DAILY,
    "HOURLY": du.HOURLY,
    "MINUTELY": du.MINUTELY,
}
PART_ORDER = [
    "FREQ",
    "INTERVAL",
    "COUNT",
    "UNTIL",
    "BYMONTH",
    "BYWEEKNO",
    "BYYEARDAY",
    "BYMONTHDAY",
    "BYDAY",
    "BYHOUR",
    "BYMINUTE",
    "BYSECOND",
    "BYSETPOS",
    "WKST",
]
WEEKDAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
_RANGES = {
    "BYSECOND": (0, 59, False),
    "BYMINUTE": (0, 59, False),
    "BYHOUR": (0, 23, False),
    "BYMONTH": (1, 12, False),
    "BYMONTHDAY": (1, 31, True),
    "BYYEARDAY": (1, 366, True),
    "BYWEEKNO": (1, 53, True),
    "BYSETPOS": (1, 366, True),
}
_UNITS = {
    "BYSECOND": "seconds are 0-59",
    "BYMINUTE": "minutes are 0-59",
    "BYHOUR": "hours are 0-23",
    "BYMONTH": "months are 1-12",
    "BYMONTHDAY": "month days are 1-31 or -31 to -1",
    "BYYEARDAY": "year days are 1-366 or -366 to -1",
    "BYWEEKNO": "week numbers are 1-53 or -53 to -1",
    "BYSETPOS": "positions are 1-366 or -366 to -1",
}
_BYDAY = re.compile(r"^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$")


class RuleError(UserError):
    """The rule text is not a usable RRULE. The message names the part."""


@dataclass(frozen=True)
class ParsedRule:
    """A rule split into its parts, each validated (values as normalized text)."""

    parts: dict[str, str]

    @property
    def freq(self) -> str:
        return self.parts["FREQ"]

    def ints(self, name: str) -> list[int]:
        value = self.parts.get(name)
        return [int(v) for v in value.split(",")] if value else []

    def byday(self) -> list[tuple[int | None, str]]:
        value = self.parts.get("BYDAY")
        out: list[tuple[int | None, str]] = []
        for token in value.split(",") if value else []:
            m = _BYDAY.match(token)
            assert m
            out.append((int(m.group(1)) if m.group(1) else None, m.group(2)))
        return out

    def text(self) -> str:
        return ";".join(f"{k}={self.parts[k]}" for k in PART_ORDER if k in self.parts)


def _check_int_list(name: str, value: str) -> str:
    lo, hi, signed = _RANGES[name]
    items = [v.strip() for v in value.split(",")]
    out = []
    for item in items:
        if not re.match(r"^[+-]?\d+$", item):
            raise RuleError(f"{name}={value}: {shown(item)} is not a whole number")
        n = int(item)
        ok = lo <= n <= hi or (signed and -hi <= n <= -lo)
        if not ok:
            raise RuleError(f"{name}={item} is out of range ({_UNITS[name]})")
        out.append(str(n))
    return ",".join(out)


def parse_rule(text: str) -> ParsedRule:
    """Split and check an RRULE (with or without the ``RRULE:`` prefix)."""
    if not isinstance(text, str) or not text.strip():
        raise RuleError("the rule is empty; write one like FREQ=DAILY;BYHOUR=9;BYMINUTE=0")
    body = text.strip()
    if body.upper().startswith("RRULE:"):
        body = body[6:]
    if "\n" in body or body.upper().startswith(("DTSTART", "EXDATE", "RDATE")):
        raise RuleError("give a single RRULE; put the start in 'start' and exclusions in 'exclude'")
    parts: dict[str, str] = {}
    for chunk in body.strip().strip(";").split(";"):
        if "=" not in chunk:
            raise RuleError(f"{shown(chunk)} is not a NAME=VALUE part")
        name, value = (s.strip() for s in chunk.split("=", 1))
        name = name.upper()
        value = value.upper()
        if name in ("SKIP", "RSCALE"):
            raise RuleError(f"{name} is not used in rules here; set invalidDatePolicy in the spec instead")
        if name not in PART_ORDER:
            from difflib import get_close_matches  # a near match, for a name that is wrong

            close = get_close_matches(name, PART_ORDER, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise RuleError(f"unknown rule part {name}{hint}")
        if name in parts:
            raise RuleError(f"{name} appears twice")
        if not value:
            raise RuleError(f"{name} has no value")
        parts[name] = value
    if "FREQ" not in parts:
        raise RuleError("FREQ is missing; start the rule with FREQ=DAILY, WEEKLY, MONTHLY, ...")
    freq = parts["FREQ"]
    if freq == "SECONDLY":
        raise RuleError("FREQ=SECONDLY is not supported; the finest step is MINUTELY")
    if freq not in FREQS:
        raise RuleError(f"FREQ={freq} is not one of YEARLY, MONTHLY, WEEKLY, DAILY, HOURLY, MINUTELY")
    if "COUNT" in parts and "UNTIL" in parts:
        raise RuleError("COUNT and UNTIL cannot both be given (RFC 5545); keep one")
    for name in ("INTERVAL", "COUNT"):
        if name in parts:
            if not re.match(r"^\d+$", parts[name]) or int(parts[name]) < 1:
                raise RuleError(f"{name}={parts[name]} must be a whole number of at least 1")
            parts[name] = str(int(parts[name]))
    if "INTERVAL" in parts and parts["INTERVAL"] == "1":
        del parts["INTERVAL"]
    for name in _RANGES:
        if name in parts:
            parts[name] = _check_int_list(name, parts[name])
    if "BYDAY" in parts:
        tokens = [t.strip() for t in parts["BYDAY"].split(",")]
        for token in tokens:
            m = _BYDAY.match(token)
            if not m:
                raise RuleError(f"BYDAY={parts['BYDAY']}: {shown(token)} is not a weekday like MO, 2TU or -1FR")
            if m.group(1):
                n = int(m.group(1))
                if freq not in ("MONTHLY", "YEARLY"):
                    raise RuleError(f"BYDAY={token}: numbered weekdays need FREQ=MONTHLY or YEARLY")
                if n == 0 or abs(n) > (5 if freq == "MONTHLY" and "BYWEEKNO" not in parts else 53):
                    raise RuleError(f"BYDAY={token}: the number is out of range")
        parts["BYDAY"] = ",".join(tokens)
    if "WKST" in parts and parts["WKST"] not in WEEKDAYS:
        raise RuleError(f"WKST={parts['WKST']} is not a weekday (MO..SU)")
    if "BYWEEKNO" in parts and freq != "YEARLY":
        raise RuleError("BYWEEKNO needs FREQ=YEARLY")
    if "BYYEARDAY" in parts and freq in ("DAILY", "WEEKLY", "MONTHLY"):
        raise RuleError(f"BYYEARDAY cannot be used with FREQ={freq}")
    if "BYMONTHDAY" in parts and freq == "WEEKLY":
        raise RuleError("BYMONTHDAY cannot be used with FREQ=WEEKLY")
    if "BYSETPOS" in parts and not any(k.startswith("BY") and k != "BYSETPOS" for k in parts):
        raise RuleError("BYSETPOS needs another BYxxx part to pick from")
    if "UNTIL" in parts:
        _parse_until(parts["UNTIL"])
    return ParsedRule(parts)


def normalize_rule_text(text: str) -> str:
    """The canonical spelling of a rule: parts in a fixed order, defaults dropped."""
    return parse_rule(text).text()


def _parse_until(value: str) -> tuple[datetime, bool]:
    """UNTIL as (datetime, is_utc). A bare date means the end of that day."""
    m = re.match(r"^(\d{8})(?:T(\d{6})(Z)?)?$", value)
    if not m:
        raise RuleError(f"UNTIL={value} is not a date (20271231) or date-time (20271231T235959 or ...Z)")
    try:
        day = datetime.strptime(m.group(1), "%Y%m%d")
        if m.group(2):
            t = datetime.strptime(m.group(2), "%H%M%S").time()
        else:
            t = time(23, 59, 59)
    except ValueError:
        raise RuleError(f"UNTIL={value} is not a real date") from None
    return datetime.combine(day.date(), t), bool(m.group(3))


def until_local(parsed: ParsedRule, zone: ZoneInfo) -> datetime | None:
    """UNTIL on the local wall clock (a UTC UNTIL is converted to the zone's wall time)."""
    if "UNTIL" not in parsed.parts:
        return None
    value, is_utc = _parse_until(parsed.parts["UNTIL"])
    if is_utc:
        return value.replace(tzinfo=UTC).astimezone(zone).replace(tzinfo=None)
    return value


def until_instant(parsed: ParsedRule) -> datetime | None:
    """A UTC UNTIL as the instant it is (RFC 5545 bounds instances by it); None otherwise.

    Its wall time alone is not enough near a fold: the second reading of that
    wall time comes after the instant.
    """
    if "UNTIL" not in parsed.parts:
        return None
    value, is_utc = _parse_until(parsed.parts["UNTIL"])
    return value.replace(tzinfo=UTC) if is_utc else None


def build_rrule(
    parsed: ParsedRule, start: datetime, *, until: datetime | None, overrides: dict[str, Any] | None = None
) -> du.rrule:
    """A dateutil rrule over naive wall times from ``start``."""
    parts = {k: v for k, v in parsed.parts.items() if k != "UNTIL"}
    if overrides:
        for key, value in overrides.items():
            if value is None:
                parts.pop(key, None)
            else:
                parts[key] = value
    text = ";".join(f"{k}={parts[k]}" for k in PART_ORDER if k in parts)
    try:
        rule = du.rrulestr("RRULE:" + text, dtstart=start, ignoretz=True)
    except (ValueError, TypeError) as exc:
        raise RuleError(f"the rule is not valid: {exc}") from None
    assert isinstance(rule, du.rrule)
    if until is not None:
        rule = rule.replace(until=until)
    return rule


def number_runs(values: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted distinct ``values`` as runs ``(first, last)`` of three or more consecutive numbers,
    and ``(n, n)`` for the rest: ``[1, 2, 3, 5]`` gives ``[(1, 3), (5, 5)]``."""
    ordered = sorted(set(values))
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        if j - i >= 2:
            out.append((ordered[i], ordered[j]))
        else:
            out.extend((v, v) for v in ordered[i : j + 1])
        i = j + 1
    return out
