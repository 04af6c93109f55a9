"""How the preview views write times: weekday in the system's language, the
wall time with its zone abbreviation, the UTC instant beside it, a real minus
sign in offsets, and one monospaced font so digits line up in columns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from PySide6.QtCore import QLocale
from PySide6.QtGui import QFont, QFontDatabase

from core.render.table import zone_label
from core.time.formats import fmt_clock
from core.time.zones import format_offset

NONE = "—"


def weekday(day: datetime) -> str:
    """The short weekday name in the system's language (``Sun``)."""
    return QLocale().dayName(day.isoweekday(), QLocale.FormatType.ShortFormat)


def wall(local: datetime) -> str:
    """``Sun 2027-03-14 03:00`` for a naive wall time."""
    return f"{weekday(local)} {local:%Y-%m-%d} {fmt_clock(local)}"


def wall_in_zone(local: datetime, abbreviation: str | None, offset: timedelta) -> str:
    """``Sun 2027-03-14 03:00 EDT``; ``UTC+10:30`` when the zone data has no letters."""
    return f"{wall(local)} {zone_label(abbreviation, offset)}"


def utc_text(instant: datetime) -> str:
    """``2027-03-14 07:00Z``."""
    at = instant.astimezone(UTC)
    return f"{at:%Y-%m-%d} {fmt_clock(at)}Z"


def offset_text(offset: timedelta | None) -> str:
    """``−04:00`` with a real minus sign, or a dash without an offset."""
    return format_offset(offset, minus="−") if offset is not None else NONE


def elide_id(value: str | None, keep: int = 8) -> str:
    """``occ-1a2b3c4d…``: the prefix and the first ``keep`` hex digits."""
    if not value:
        return NONE
    head, _, digest = value.partition("-")
    return f"{head}-{digest[:keep]}…" if len(digest) > keep else value


def tabular_font() -> QFont:
    """The system's fixed-width font: every digit the same width, so times align."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    # Some platforms (offscreen, minimal desktops) name no fixed font: ask by hint.
    font.setStyleHint(QFont.StyleHint.TypeWriter)
    font.setFixedPitch(True)
    return font
