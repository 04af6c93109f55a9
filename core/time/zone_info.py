"""What a person needs to know to pick a time zone: each zone's offset and
abbreviation now, its yearly pattern of clock changes, and whether its rules
changed recently.

Everything is computed from the ``tzdata`` package's zones (never the operating
system's data) at an instant the caller passes in, so results are repeatable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from importlib import resources
from pathlib import Path

from core.errors import ZoneError
from core.time.zones import Transition, check_zone_name, get_zone, transitions

#: Rule changes older than this many years are not worth a note.
RECENT_YEARS = 10
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_YEAR = timedelta(days=366)


def signed_offset(offset: timedelta) -> str:
    """``+05:30``, ``−05:00`` (a true minus sign, for display)."""
    total = int(offset.total_seconds())
    sign = "+" if total >= 0 else "−"
    hours, rest = divmod(abs(total), 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{sign}{hours:02d}:{minutes:02d}" + (f":{seconds:02d}" if seconds else "")


def _is_numeric_abbreviation(abbreviation: str) -> bool:
    """tzdata spells many zones' abbreviations as numbers (``-03``); those repeat the offset."""
    return not abbreviation or abbreviation[0] in "+-"


def offset_label(abbreviation: str, offset: timedelta) -> str:
    """``EST −05:00``, or just ``−03:00`` when the abbreviation is only a number."""
    text = signed_offset(offset)
    return text if _is_numeric_abbreviation(abbreviation) else f"{abbreviation} {text}"


@dataclass(frozen=True)
class ZoneChoice:
    """One zone as the picker lists it, read at one instant."""

    name: str
    abbreviation: str
    offset: timedelta
    label: str
    country: str = ""
    comment: str = ""


@lru_cache(maxsize=1)
def country_names() -> dict[str, str]:
    """ISO 3166 code → the tz database's English name of the country (``iso3166.tab``)."""
    text = resources.files("tzdata").joinpath("zoneinfo", "iso3166.tab").read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            code, _, name = line.partition("\t")
            out[code] = name.strip()
    return out


@lru_cache(maxsize=1)
def zone_tab() -> tuple[tuple[str, str, str], ...]:
    """(country code, zone name, comment) for every row of the tzdata ``zone.tab``, in file order."""
    text = resources.files("tzdata").joinpath("zoneinfo", "zone.tab").read_text(encoding="utf-8")
    rows: list[tuple[str, str, str]] = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        rows.append((fields[0], fields[2], fields[3] if len(fields) > 3 else ""))
    return tuple(rows)


@lru_cache(maxsize=1)
def zone_table() -> tuple[tuple[str, str, str], ...]:
    """(name, country, comment) for every location in the tzdata ``zone.tab``, plus UTC."""
    countries = country_names()
    rows: list[tuple[str, str, str]] = [("UTC", "", "Coordinated Universal Time")]
    rows.extend((name, countries.get(code, code), comment) for code, name, comment in zone_tab())
    return tuple(sorted(rows, key=lambda row: row[0]))


def choice_for(name: str, now: datetime) -> ZoneChoice:
    """The :class:`ZoneChoice` of one zone at ``now``; raises :class:`ZoneError` for a bad name."""
    zone = get_zone(check_zone_name(name))
    local = now.astimezone(zone)
    offset = local.utcoffset() or timedelta(0)
    abbreviation = local.tzname() or ""
    country, comment = next(((c, m) for n, c, m in zone_table() if n == name), ("", ""))
    return ZoneChoice(name, abbreviation, offset, f"{name} — {offset_label(abbreviation, offset)}", country, comment)


def zone_choices(now: datetime) -> list[ZoneChoice]:
    """Every location zone (tzdata's ``zone.tab``, plus UTC) with its offset and abbreviation at ``now``."""
    out = []
    for name, country, comment in zone_table():
        zone = get_zone(name)
        local = now.astimezone(zone)
        offset = local.utcoffset() or timedelta(0)
        abbreviation = local.tzname() or ""
        label = f"{name} — {offset_label(abbreviation, offset)}"
        out.append(ZoneChoice(name, abbreviation, offset, label, country, comment))
    return out


# --- yearly pattern -----------------------------------------------------------------


def _local_month(tr: Transition) -> int:
    return tr.local_before.month


def _year_changes(name: str, year: int) -> list[Transition]:
    zone = get_zone(name)
    return transitions(zone, datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))


def _describe_span(minutes: int) -> str:
    if minutes % 60 == 0:
        return f"{minutes // 60} h"
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def _pattern(changes: list[Transition]) -> str:
    """``DST Mar–Nov``; ``no DST``; or the months when the pattern is not a simple pair."""
    if not changes:
        return "no DST"
    forward = [t for t in changes if t.kind == "gap"]
    back = [t for t in changes if t.kind == "fold"]
    if len(forward) == 1 and len(back) == 1 and forward[0].delta == back[0].delta:
        text = f"DST {_MONTHS[_local_month(forward[0]) - 1]}–{_MONTHS[_local_month(back[0]) - 1]}"
        minutes = forward[0].seconds // 60
        return text if minutes == 60 else f"{text} ({'+' + _describe_span(minutes)})"
    months = ", ".join(
        f"{_MONTHS[_local_month(t) - 1]} {'+' if t.kind == 'gap' else '−'}{_describe_span(t.seconds // 60)}"
        for t in changes
    )
    return f"clocks change {months}"


def zone_summary(name: str, now: datetime) -> str:
    """One line under the picker: ``EST −05:00 · DST Mar–Nov`` (the offset in force at ``now``).

    The pattern is read from the zone's changes in the year from ``now``.
    """
    choice = choice_for(name, now)
    changes = transitions(get_zone(name), now, now + _YEAR)
    return f"{offset_label(choice.abbreviation, choice.offset)} · {_pattern(changes)}"


# --- recent rule changes -------------------------------------------------------------


@dataclass(frozen=True)
class _Regime:
    """A calendar year's clock rules: the offsets in use and each change as (month, before, after)."""

    offsets: frozenset[timedelta]
    changes: tuple[tuple[int, timedelta, timedelta], ...]

    def similar(self, other: _Regime) -> bool:
        # Months may drift by one from year to year (rules tied to a weekday,
        # or to Ramadan in Morocco) without the rules having changed.
        if self.offsets != other.offsets or len(self.changes) != len(other.changes):
            return False
        return all(
            (a[1], a[2]) == (b[1], b[2]) and min(abs(a[0] - b[0]), 12 - abs(a[0] - b[0])) <= 1
            for a, b in zip(self.changes, other.changes, strict=True)
        )

    @property
    def has_dst(self) -> bool:
        """Clocks go both forward and back within the year."""
        return any(a > b for _, b, a in self.changes) and any(a < b for _, b, a in self.changes)

    @property
    def standard(self) -> timedelta:
        return min(self.offsets)


def _regime(name: str, year: int) -> _Regime:
    zone = get_zone(name)
    start = datetime(year, 1, 1, tzinfo=UTC)
    changes = _year_changes(name, year)
    offsets = {start.astimezone(zone).utcoffset() or timedelta(0)} | {t.offset_after for t in changes}
    return _Regime(frozenset(offsets), tuple((_local_month(t), t.offset_before, t.offset_after) for t in changes))


def rules_note(name: str, now: datetime, years: int = RECENT_YEARS) -> str | None:
    """A warning when the zone's rules changed within ``years`` before ``now``, else None.

    ``no DST since 2022: CST −06:00 all year (clocks last changed on 2022-10-30)``
    (America/Mexico_City); ``rules changed in 2024: on 2024-03-01 the offset
    moved from +06:00 to +05:00`` (Asia/Almaty). Each calendar year's rules are
    compared with the year after, newest first, back to ``years`` before ``now``.
    """
    check_zone_name(name)
    year = now.year
    current = _regime(name, year)
    newer = current
    while year - 1 >= now.year - years:
        older = _regime(name, year - 1)
        if not older.similar(newer):
            break
        newer = older
        year -= 1
    else:
        return None
    # ``year`` is the first year of today's rules. The year before may be a
    # transitional one (a single change mid-year), so the old rules are read
    # from the year before that.
    old = _regime(name, year - 2)
    zone = get_zone(name)
    last = _last_change_before(name, datetime(year, 1, 1, tzinfo=UTC))
    if not current.has_dst:
        if last is None:  # pragma: no cover - a change was detected, so there is one
            return f"rules changed in {year - 1}"
        day = f"{last.local_before:%Y-%m-%d}"
        in_force = last.utc.astimezone(zone)
        now_label = offset_label(in_force.tzname() or "", last.offset_after)
        if not old.has_dst:
            before, after = signed_offset(last.offset_before), signed_offset(last.offset_after)
            return f"rules changed in {last.local_before.year}: on {day} the offset moved from {before} to {after}"
        if last.kind == "fold":
            return f"no DST since {last.local_before.year}: {now_label} all year (clocks last changed on {day})"
        return (
            f"clocks no longer change since {last.local_before.year}: {now_label} all year "
            f"(clocks last changed on {day})"
        )
    if not old.has_dst:
        return f"DST since {year}: clocks now change twice a year"
    when = last.local_before.year if last is not None else year
    if old.standard != current.standard:
        return (
            f"rules changed in {when}: standard time moved from {signed_offset(old.standard)} "
            f"to {signed_offset(current.standard)}"
        )
    return f"rules changed in {when}: the dates of its clock changes moved"


def _last_change_before(name: str, instant: datetime) -> Transition | None:
    zone = get_zone(name)
    found = transitions(zone, instant - timedelta(days=3 * 366), instant)
    return found[-1] if found else None


# --- the system's zone ---------------------------------------------------------------


def _zone_from_path(text: str) -> str | None:
    marker = "zoneinfo/"
    if marker in text:
        return text.split(marker, 1)[1]
    return None


def _usable(name: str | None) -> str | None:
    if not name:
        return None
    if name in ("Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu", "UCT", "Universal", "Zulu", "Etc/GMT", "GMT"):
        return "UTC"
    try:
        return check_zone_name(name)
    except ZoneError:
        return None


def system_zone_name(env: Mapping[str, str] | None = None, localtime: Path = Path("/etc/localtime")) -> str:
    """The zone name the system is set to: ``TZ``, else the ``/etc/localtime`` link target, else UTC.

    Only the *name* is read from the system; the zone's data always comes from tzdata.
    """
    environ = os.environ if env is None else env
    tz = environ.get("TZ", "").strip()
    if tz:
        tz = tz.removeprefix(":")
        found = _usable(_zone_from_path(tz) if "/" in tz and tz.startswith("/") else tz)
        if found:
            return found
    try:
        target = os.readlink(localtime)
    except OSError:
        return "UTC"
    return _usable(_zone_from_path(target)) or "UTC"


def wall_time_hint(local: datetime | None, zone_name: str) -> str:
    """``EST −05:00 · 07:30 UTC`` for a wall time in a zone; says so when it does not exist or happens twice."""
    if local is None:
        return ""
    try:
        zone = get_zone(zone_name)
    except ZoneError:
        return ""
    first = local.replace(tzinfo=zone, fold=0)
    second = local.replace(tzinfo=zone, fold=1)
    back = first.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
    if back != local:
        return f"does not exist in {zone_name} (clocks jump forward)"
    label = offset_label(first.tzname() or "", first.utcoffset() or timedelta(0))
    text = f"{label} · {first.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    if second.utcoffset() != first.utcoffset():
        text += " · happens twice (clocks fall back)"
    return text
