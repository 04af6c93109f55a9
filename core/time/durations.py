"""ISO 8601 durations as used in specs (``PT15M``, ``P1D``, ``P1DT2H30M``).

Only exact units are accepted: weeks, days, hours, minutes and seconds. A day
here is 24 hours of elapsed time. Months and years are refused because their
length depends on the calendar, which would make "every P1M" ambiguous.
Durations are whole seconds, like every time a schedule produces (``PT0.5S``
is refused): a fraction would put two runs in one second of the contract's
``...THH:MM:SSZ`` times.
"""

from __future__ import annotations

import re
from datetime import timedelta

from core.os_text import shown

_DURATION = re.compile(
    r"^P(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?"
    r"(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+)S)?)?$"
)
_FRACTION = re.compile(r"^P.*T.*\d[.,]\d+S$")
#: Seconds in the longest duration a timedelta holds (999,999,999 days).
_MAX_SECONDS = int(timedelta.max.total_seconds())


def parse_duration(text: str) -> timedelta:
    """Parse an ISO 8601 duration, raising ``ValueError`` with a readable message."""
    if not isinstance(text, str):
        raise ValueError(f"expected an ISO 8601 duration such as PT15M, got {shown(text)}")
    value = text.strip().upper()
    if re.match(r"^P(\d+W)?(\d+D)?\d+[YM]|^P\d+[YM]", value):
        raise ValueError(
            f"{shown(text)} uses years or months, whose length varies; use days, hours or minutes (e.g. P30D)"
        )
    if re.search(r"\d{16}", value):
        raise ValueError(f"{shown(text)} is longer than any duration can be (999,999,999 days)")
    if _FRACTION.match(value):
        raise ValueError(f"{shown(text)} is not a whole number of seconds; durations are counted in whole seconds")
    m = _DURATION.match(value)
    if not m or value in ("P", "PT") or value.endswith("T"):
        raise ValueError(f"{shown(text)} is not an ISO 8601 duration; examples: PT30S, PT15M, PT2H, P1D")
    parts = {k: int(v) if v else 0 for k, v in m.groupdict().items()}
    days = parts["weeks"] * 7 + parts["days"]
    seconds = ((days * 24 + parts["hours"]) * 60 + parts["minutes"]) * 60 + parts["seconds"]
    if seconds > _MAX_SECONDS:
        raise ValueError(f"{shown(text)} is longer than any duration can be (999,999,999 days)")
    return timedelta(seconds=seconds)


def format_duration(delta: timedelta) -> str:
    """The canonical ISO 8601 text for a duration (``PT0S`` for zero)."""
    total = delta.total_seconds()
    if total < 0:
        raise ValueError("durations are never negative")
    micro = round(total * 1_000_000)
    seconds, micro = divmod(micro, 1_000_000)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    out = "P"
    if days:
        out += f"{days}D"
    time = ""
    if hours:
        time += f"{hours}H"
    if minutes:
        time += f"{minutes}M"
    if secs or micro:
        time += f"{secs}.{micro:06d}".rstrip("0").rstrip(".") + "S" if micro else f"{secs}S"
    if time:
        out += "T" + time
    return out if out != "P" else "PT0S"


def human_duration(delta: timedelta) -> str:
    """Short words for a length of time: ``1 h``, ``30 min``, ``1 h 30 min``, ``1 day``."""
    seconds = int(abs(delta.total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = []
    if days:
        parts.append(f"{days} day" + ("s" if days != 1 else ""))
    if hours:
        parts.append(f"{hours} h")
    if minutes:
        parts.append(f"{minutes} min")
    if secs:
        parts.append(f"{secs} s")
    return " ".join(parts) or "0 s"


#: An ISO 8601 duration standing alone in a sentence (``latenessWindow (PT15M)``).
_DURATION_IN_TEXT = re.compile(r"(?<![\w./-])P(?=\d|T\d)[0-9WDTHMS]+(?![\w./-])")


def durations_in_words(text: str) -> str:
    """``text`` with every ISO 8601 duration in it said in words: ``latenessWindow (PT15M)`` ->
    ``latenessWindow (15 min)``. What does not parse as a duration is left as written."""

    def words(match: re.Match[str]) -> str:
        try:
            return human_duration(parse_duration(match.group()))
        except ValueError:
            return match.group()

    return _DURATION_IN_TEXT.sub(words, text)
