"""Time zones, always from the ``tzdata`` package (never the operating system),
so that every machine resolves the same instants and the tzdb version is known.

Also finds a zone's offset changes ("transitions") in a range of instants.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import operator
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from importlib import resources
from zoneinfo import ZoneInfo

import tzdata

from core.errors import ZoneError, first_line
from core.os_text import shown

_RAW_OFFSET = re.compile(r"^(?:UTC|GMT|Z)?\s*[+\-−]\s*\d{1,2}(?::?\d{2})?$", re.IGNORECASE)


def tzdb_version() -> str:
    """The IANA release of the zone data in use, e.g. ``2026f``."""
    return str(tzdata.IANA_VERSION)


@lru_cache(maxsize=1)
def available_zones() -> tuple[str, ...]:
    """Every zone name the tzdata package ships, sorted."""
    text = resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8")
    return tuple(sorted(line.strip() for line in text.splitlines() if line.strip()))


@lru_cache(maxsize=1)
def _zone_set() -> frozenset[str]:
    return frozenset(available_zones())


def is_location_zone(name: str) -> bool:
    """True for names we accept: ``Area/Location`` zones and ``UTC``."""
    if name == "UTC":
        return True
    if "/" not in name or (name.startswith("Etc/") and name != "Etc/UTC"):
        return False
    return name in _zone_set()


@lru_cache(maxsize=1)
def _canonical_by_digest() -> dict[str, str]:
    """Map zone file digests to a preferred location name (aliases are byte copies)."""
    out: dict[str, str] = {}
    root = resources.files("tzdata").joinpath("zoneinfo")
    for name in available_zones():
        if "/" not in name or name.startswith(("Etc/", "US/", "SystemV/")):
            continue
        digest = hashlib.sha256(root.joinpath(name).read_bytes()).hexdigest()
        out.setdefault(digest, name)
    return out


def _suggest_location(name: str) -> str | None:
    try:
        data = resources.files("tzdata").joinpath("zoneinfo").joinpath(name).read_bytes()
    except (FileNotFoundError, IsADirectoryError, OSError):
        return None
    return _canonical_by_digest().get(hashlib.sha256(data).hexdigest())


def check_zone_name(name: object) -> str:
    """Return ``name`` if it is a usable zone, else raise :class:`ZoneError` saying why."""
    if not isinstance(name, str) or not name.strip():
        raise ZoneError("expected an IANA time zone name such as Europe/Paris, or UTC")
    if name != name.strip():
        raise ZoneError(f"{shown(name)} has surrounding spaces")
    if _RAW_OFFSET.match(name):
        raise ZoneError(
            f"{shown(name)} is a raw UTC offset; offsets change with daylight saving time, "
            "so name a place instead, such as Europe/Berlin, or use UTC"
        )
    if name.startswith("Etc/GMT") and name not in ("Etc/GMT", "Etc/GMT0", "Etc/GMT+0", "Etc/GMT-0"):
        raise ZoneError(
            f"{shown(name)} is a fixed offset (and its sign is inverted: Etc/GMT+5 means UTC−05:00); "
            "name a place such as America/Bogota, or use UTC"
        )
    if is_location_zone(name):
        return name
    if name in _zone_set():
        if (name.isupper() and len(name) <= 5) or name in ("EST5EDT", "CST6CDT", "MST7MDT", "PST8PDT"):
            raise ZoneError(
                f"{shown(name)} is an abbreviation, not a place, and abbreviations are ambiguous; "
                "use an IANA name such as America/New_York"
            )
        better = _suggest_location(name)
        hint = f"; use {better}" if better else "; use an IANA name such as Europe/London"
        raise ZoneError(f"{shown(name)} is a legacy alias, not a location{hint}")
    lower = {z.lower(): z for z in available_zones() if is_location_zone(z)}
    if name.lower() in lower:
        raise ZoneError(
            f"unknown time zone {shown(name)}; zone names are case-sensitive: did you mean {lower[name.lower()]}?"
        )
    from difflib import get_close_matches  # a near match, for a name that is wrong

    close = get_close_matches(name, list(lower.values()), n=1, cutoff=0.75)
    hint = f"; did you mean {close[0]}?" if close else "; use an IANA name such as America/New_York"
    raise ZoneError(f"unknown time zone {shown(name)}{hint}")


def zone_tzif(name: str) -> bytes:
    """The compiled TZif bytes of zone ``name`` as the installed tzdata package ships them
    (validated first): what a revision under ``tzdbPolicy: PIN`` stores."""
    check_zone_name(name)
    return resources.files("tzdata").joinpath("zoneinfo").joinpath(name).read_bytes()


@lru_cache(maxsize=512)
def get_zone(name: str) -> ZoneInfo:
    """The zone ``name`` loaded from the installed tzdata package (validated first)."""
    return ZoneInfo.from_file(io.BytesIO(zone_tzif(name)), key=name)


_PINNED: dict[tuple[str, str], ZoneInfo] = {}
_PINNED_LOCK = threading.Lock()


def pinned_zone(name: str, tzif: bytes) -> ZoneInfo:
    """The zone ``name`` built from a revision's pinned TZif bytes, whatever tzdata is installed.

    Cached by the bytes' digest: every revision pinned to the same rules shares one zone.
    The bytes are untrusted (anyone who can write the ledger can write them): they are
    checked with bounds first (:func:`core.time.tzif_check.check_tzif`), and whatever they
    are, this returns or raises :class:`ZoneError` in bounded time, never hangs.
    """
    key = (name, hashlib.sha256(tzif).hexdigest())
    with _PINNED_LOCK:
        zone = _PINNED.get(key)
    if zone is None:
        zone = _read_pinned(name, tzif)
        with _PINNED_LOCK:
            zone = _PINNED.setdefault(key, zone)
    return zone


#: Instants a zone read from pinned bytes is asked about once, so that rules zoneinfo
#: accepts but cannot answer with fail here rather than in the middle of an expansion.
_PROBES = tuple(datetime(year, 7, 1) for year in (1, 1970, 2000, 2038, 9999))


def _read_pinned(name: str, tzif: bytes) -> ZoneInfo:
    from core.time.tzif_check import check_tzif  # only pinned bytes are checked so

    try:
        check_tzif(tzif)
        zone = ZoneInfo.from_file(io.BytesIO(tzif), key=name)
        for probe in _PROBES:
            probe.replace(tzinfo=zone).utcoffset()
            probe.replace(tzinfo=zone, fold=1).utcoffset()
    except ZoneError as exc:
        raise ZoneError(f"the pinned rules of {name} cannot be read: {exc}") from None
    except Exception as exc:  # zoneinfo's own errors on bytes that passed the check: any of them
        raise ZoneError(f"the pinned rules of {name} cannot be read: {first_line(exc)}") from None
    return zone


@lru_cache(maxsize=1024)
def format_offset(offset: timedelta | None, minus: str = "-") -> str:
    """``+05:30``, ``-05:00``; ``±HH:MM:SS`` when the offset has seconds (local mean time)."""
    if offset is None:
        return ""
    total = int(offset.total_seconds())
    sign = "+" if total >= 0 else minus
    total = abs(total)
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    if seconds:
        return f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}"
    return f"{sign}{hours:02d}:{minutes:02d}"


def offset_at(zone: ZoneInfo, instant: datetime) -> timedelta:
    off = instant.astimezone(zone).utcoffset()
    assert off is not None
    return off


@dataclass(frozen=True)
class Transition:
    """One change of a zone's UTC offset."""

    utc: datetime
    offset_before: timedelta
    offset_after: timedelta
    abbr_before: str
    abbr_after: str

    @property
    def kind(self) -> str:
        """``gap`` when clocks jump forward (wall times are skipped), else ``fold``."""
        return "gap" if self.offset_after > self.offset_before else "fold"

    @property
    def delta(self) -> timedelta:
        return abs(self.offset_after - self.offset_before)

    @property
    def seconds(self) -> int:
        return int(self.delta.total_seconds())

    @property
    def local_before(self) -> datetime:
        """Wall time just as the change happens, read on the old offset."""
        return (self.utc + self.offset_before).replace(tzinfo=None)

    @property
    def local_after(self) -> datetime:
        """Wall time just after the change, read on the new offset."""
        return (self.utc + self.offset_after).replace(tzinfo=None)


def find_change(zone: ZoneInfo, lo: datetime, hi: datetime) -> Transition:
    """Binary-search the first instant in ``(lo, hi]`` where the offset differs from ``lo``'s.

    The caller guarantees the offsets at ``lo`` and ``hi`` differ.
    """
    base = offset_at(zone, lo)
    lo_s, hi_s = int(lo.timestamp()), int(hi.timestamp())
    local = datetime.fromtimestamp  # with the zone: the instant on its clock, in one C call
    while hi_s - lo_s > 1:
        mid = (lo_s + hi_s) // 2
        if local(mid, zone).utcoffset() == base:
            lo_s = mid
        else:
            hi_s = mid
    at = datetime.fromtimestamp(hi_s, UTC)
    before = local(hi_s - 1, zone)
    after = local(hi_s, zone)
    ob, oa = before.utcoffset(), after.utcoffset()
    assert ob is not None and oa is not None
    return Transition(at, ob, oa, before.tzname() or "", after.tzname() or "")


_SCAN_STEP = timedelta(hours=12)
_DAY = timedelta(days=1)
#: Wall-clock readings :func:`transitions` holds at once (a year).
_WALL_BATCH = 732
_SECOND = timedelta(seconds=1)
#: The instants whose wall time exists in every zone: the calendar (years 1 to 9999)
#: less the largest offset on either side.
FIRST_INSTANT = datetime(1, 1, 3, tzinfo=UTC)
LAST_INSTANT = datetime(9999, 12, 29, tzinfo=UTC)


def shifted(instant: datetime, delta: timedelta) -> datetime:
    """``instant + delta``, kept within [FIRST_INSTANT, LAST_INSTANT] instead of
    leaving the calendar (a search window near year 1 or 9999 ends where it does)."""
    try:
        moved = instant + delta
    except OverflowError:
        return LAST_INSTANT if delta > timedelta(0) else FIRST_INSTANT
    return min(max(moved, FIRST_INSTANT), LAST_INSTANT)


def transitions(zone: ZoneInfo, start: datetime, end: datetime, limit: int = 100_000) -> list[Transition]:
    """Every offset change with ``start <= utc < end`` (aware UTC datetimes).

    The wall clock is read every 12 hours first (one C call per reading, in one
    pass); the instants are then scanned only around two readings that differ.
    """
    start, end = max(start, FIRST_INSTANT), min(end, LAST_INSTANT)
    if end - start <= _SCAN_STEP * 4:
        return _scan(zone, start, end, limit)
    out: list[Transition] = []
    count = int((end - start + 2 * _DAY) / _SCAN_STEP) + 2
    wall = (start - _DAY).replace(tzinfo=None)
    # A year of readings at a time (the last of one batch is the first of the next): bounded memory.
    for done in range(0, count - 1, _WALL_BATCH):
        steps = itertools.repeat(_SCAN_STEP, min(_WALL_BATCH, count - 1 - done))
        walls = list(itertools.accumulate(steps, operator.add, initial=wall))
        wall = walls[-1]
        if _changes_between(zone, walls, start, end, limit, out):
            return out[:limit]
    return out


def _changes_between(
    zone: ZoneInfo, walls: list[datetime], start: datetime, end: datetime, limit: int, out: list[Transition]
) -> bool:
    """Add to ``out`` the changes whose wall times lie among ``walls`` (read every 12 hours);
    True once ``out`` holds ``limit`` of them."""
    read = list(map(zone.utcoffset, walls))
    for i in itertools.compress(itertools.count(), map(operator.ne, read, read[1:])):
        before, after = read[i], read[i + 1]
        assert before is not None and after is not None
        # The instants whose wall times lie between the two readings, with a second to spare.
        lo = max((walls[i] - max(before, after)).replace(tzinfo=UTC) - _SECOND, start)
        hi = min((walls[i + 1] - min(before, after)).replace(tzinfo=UTC) + _SECOND, end)
        out.extend(tr for tr in _scan(zone, lo, hi, limit) if not out or tr.utc > out[-1].utc)
        if len(out) >= limit:
            return True
    return False


def _scan(zone: ZoneInfo, start: datetime, end: datetime, limit: int) -> list[Transition]:
    """:func:`transitions`, sampling the instants every 12 hours from ``start`` to ``end``."""
    out: list[Transition] = []
    # Start a second early: a change exactly at ``start`` is already in force
    # there, so it is only seen as a difference from the instant before.
    t = start - timedelta(seconds=1)
    prev = offset_at(zone, t)
    while t < end and len(out) < limit:
        nxt = min(t + _SCAN_STEP, end)
        cur = offset_at(zone, nxt)
        if cur != prev:
            tr = find_change(zone, t, nxt)
            if start <= tr.utc < end:
                out.append(tr)
            t = tr.utc
            prev = tr.offset_after
            continue
        t, prev = nxt, cur
    return out


def next_transition(
    zone: ZoneInfo, after: datetime, kind: str | None = None, within: timedelta = timedelta(days=3660)
) -> Transition | None:
    """The first transition at or after ``after`` (of ``kind`` gap/fold if given), searching ``within``."""
    end = shifted(after, within)
    t = after
    while t < end:
        chunk_end = min(t + timedelta(days=400), end)
        for tr in transitions(zone, t, chunk_end):
            if kind is None or tr.kind == kind:
                return tr
        t = chunk_end
    return None


class ZoneIndex:
    """Which wall times lie near an offset change, per calendar year, cached.

    Far from every change a wall time has exactly one instant, found with one
    offset lookup; only times inside these windows need the full resolution.
    """

    _MARGIN = timedelta(hours=3)

    def __init__(self, zone: ZoneInfo) -> None:
        self.zone = zone
        self._windows: dict[int, tuple[tuple[datetime, datetime], ...]] = {}

    def near_change(self, local: datetime) -> bool:
        windows = self._windows.get(local.year)
        if windows is None:
            windows = self._build(local.year)
        for lo, hi in windows:  # noqa: SIM110 - a plain loop is faster here
            if lo <= local < hi:
                return True
        return False

    def _build(self, year: int) -> tuple[tuple[datetime, datetime], ...]:
        # Sample the wall clock every 12 hours; where two samples read
        # different offsets, a change lies between them.
        zone = self.zone
        step = _SCAN_STEP
        t = datetime(max(year - 1, 1), 12, 30) if year > 1 else datetime(1, 1, 1)
        end = datetime(year + 1, 1, 3) if year < 9999 else datetime(9999, 12, 31)
        prev = zone.utcoffset(t)
        windows = []
        while t < end:
            nxt = t + step
            cur = zone.utcoffset(nxt)
            if cur != prev:
                # Read with fold=0, a wall time inside a gap or a fold reads the old
                # offset, so the change can begin up to its own length before t
                # (a whole day in Pacific/Apia 2011): widen the window by it.
                assert cur is not None and prev is not None
                windows.append((t - abs(cur - prev) - self._MARGIN, nxt + self._MARGIN))
                prev = cur
            t = nxt
        self._windows[year] = tuple(windows)
        return self._windows[year]


@lru_cache(maxsize=512)
def zone_index(name: str) -> ZoneIndex:
    """The shared :class:`ZoneIndex` of a zone."""
    return ZoneIndex(get_zone(name))
