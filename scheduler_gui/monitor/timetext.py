"""How the monitor writes instants: local time with the zone's abbreviation and
offset, UTC beside it, and ages in words. Weekday names follow the system's
language (QLocale); the digits are meant for a monospaced, tabular font."""

from __future__ import annotations

from datetime import datetime, timedelta

from PySide6.QtCore import QLocale
from PySide6.QtGui import QFont, QFontDatabase

from core.render.table import zone_label
from core.time.zones import format_offset, get_zone


def tabular_font() -> QFont:
    """The system's fixed-pitch font: digits line up in columns."""
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def _weekday(local: datetime) -> str:
    return QLocale().dayName(local.isoweekday(), QLocale.FormatType.ShortFormat)


def local_text(instant: datetime | None, zone_name: str) -> str:
    """``Mon 2027-03-01 07:00 EST −05:00``; an em dash without an instant."""
    if instant is None:
        return "—"
    try:
        zone = get_zone(zone_name)
    except Exception:  # an unknown zone name in an old revision: show UTC rather than fail
        return utc_text(instant)
    local = instant.astimezone(zone)
    offset = local.utcoffset() or timedelta(0)
    label = zone_label(local.tzname(), offset)
    sign = format_offset(offset, "−")
    if label.startswith("UTC"):  # the zone has no abbreviation: the offset says it all
        return f"{_weekday(local)} {local:%Y-%m-%d %H:%M} UTC{sign}"
    return f"{_weekday(local)} {local:%Y-%m-%d %H:%M} {label} {sign}"


def utc_text(instant: datetime | None) -> str:
    """``2027-03-01 12:00Z``."""
    if instant is None:
        return "—"
    return f"{instant:%Y-%m-%d %H:%M}Z"


def utc_seconds_text(instant: datetime | None) -> str:
    """``2027-03-01 12:00:05Z`` (attempts: seconds matter)."""
    if instant is None:
        return "—"
    return f"{instant:%Y-%m-%d %H:%M:%S}Z"


def nominal_text(nominal_local: str, fold_ordinal: int) -> str:
    """The nominal wall time as the spec wrote it; the second reading of a repeated hour says so."""
    text = nominal_local.replace("T", " ")[:16]
    return f"{text} (2nd)" if fold_ordinal == 1 else text


def run_time_text(duration: timedelta | None) -> str:
    """How long an attempt ran: ``4 ms`` under a second (a task that ran never reads "0 s"),
    else as :func:`age_text` (``1 s``, ``3 min``); ``—`` for None."""
    if duration is not None and timedelta(0) < duration < timedelta(seconds=1):
        return f"{max(1, round(duration.total_seconds() * 1000))} ms"
    return age_text(duration)


def age_text(age: timedelta | float | None) -> str:
    """``3 min``, ``2 h 05 min``, ``4 d 3 h``; ``—`` for None."""
    if age is None:
        return "—"
    seconds = int(age.total_seconds() if isinstance(age, timedelta) else age)
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"
