"""Parsing and formatting of the date-time texts that specs and outputs use."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

from core.os_text import shown

_LOCAL = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:?\d{2})$", re.IGNORECASE)
_FRACTION = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}[.,]\d+(Z|[+-]\d{2}:?\d{2})?$", re.IGNORECASE)


def parse_local(text: str, what: str = "a local date-time") -> datetime:
    """``2026-01-01T09:00[:00]`` (or a bare date, meaning midnight) as a naive wall time."""
    value = str(text).strip()
    if _DATE.match(value):
        try:
            return datetime.combine(date.fromisoformat(value), datetime.min.time())
        except ValueError as exc:
            raise ValueError(f"{shown(text)} is not a real date ({exc})") from None
    if _FRACTION.match(value):
        raise ValueError(f"{shown(text)} has a fraction of a second; times are whole seconds")
    if _INSTANT.match(value):
        raise ValueError(
            f"{shown(text)} carries an offset, but this is {what} (wall-clock time in timeZone); remove the offset"
        )
    if not _LOCAL.match(value):
        raise ValueError(f"{shown(text)} is not {what} like 2026-01-01T09:00:00")
    try:
        return datetime.fromisoformat(value.replace(" ", "T"))
    except ValueError as exc:
        raise ValueError(f"{shown(text)} is not a real date-time ({exc})") from None


def parse_instant(text: str) -> datetime:
    """``2026-11-01T06:00:00Z`` or with an explicit offset, as an aware UTC datetime."""
    value = str(text).strip()
    if _FRACTION.match(value):
        raise ValueError(f"{shown(text)} has a fraction of a second; instants are whole seconds")
    if not _INSTANT.match(value):
        if _LOCAL.match(value) or _DATE.match(value):
            raise ValueError(f"{shown(text)} has no offset; an instant needs one: end it with Z for UTC")
        raise ValueError(f"{shown(text)} is not an instant like 2026-11-01T06:00:00Z")
    try:
        parsed = datetime.fromisoformat(value.replace(" ", "T").replace("z", "Z"))
    except ValueError as exc:
        raise ValueError(f"{shown(text)} is not a real date-time ({exc})") from None
    return parsed.astimezone(UTC)


def parse_local_or_date(text: str) -> date | datetime:
    """An ``exclude`` entry: a whole local date, or one local date-time."""
    value = str(text).strip()
    if _DATE.match(value):
        try:
            return date.fromisoformat(value)
        except ValueError as exc:
            raise ValueError(f"{shown(text)} is not a real date ({exc})") from None
    return parse_local(value, "a local date or date-time")


def fmt_local(dt: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` (nominalLocal)."""
    return dt.replace(tzinfo=None, microsecond=0).isoformat()


def fmt_utc(dt: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` (resolvedUtc, positionUtc)."""
    return dt.astimezone(UTC).replace(tzinfo=None, microsecond=0).isoformat() + "Z"


def fmt_clock(dt: datetime) -> str:
    """``02:30``, or ``02:30:15`` when seconds matter."""
    return dt.strftime("%H:%M:%S") if dt.second else dt.strftime("%H:%M")
