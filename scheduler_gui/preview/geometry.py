"""The timeline's arithmetic, free of Qt so it can be tested as plain tables:
mapping instants to pixels, zooming and panning, choosing axis ticks on the
local wall clock, and the offset periods and repeated spans to shade.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

from core.time.zones import Transition

#: Tick spacings, finest first. Days and weeks are counted on the wall clock.
TICK_STEPS: tuple[timedelta, ...] = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=15),
    timedelta(minutes=30),
    timedelta(hours=1),
    timedelta(hours=3),
    timedelta(hours=6),
    timedelta(hours=12),
    timedelta(days=1),
    timedelta(days=2),
    timedelta(days=7),
    timedelta(days=14),
    timedelta(days=28),
    timedelta(days=91),
    timedelta(days=364),
)
#: The narrowest and widest stretch of time the axis may show.
MIN_SPAN = timedelta(minutes=10)
MAX_SPAN = timedelta(days=366 * 30)
MAX_TICKS = 400


@dataclass(frozen=True)
class Viewport:
    """The stretch of time ``[start, end]`` (aware) drawn across ``width`` pixels."""

    start: datetime
    end: datetime
    width: float

    @property
    def span(self) -> timedelta:
        return self.end - self.start

    @property
    def seconds_per_px(self) -> float:
        return self.span.total_seconds() / max(self.width, 1.0)

    def x_of(self, instant: datetime) -> float:
        return (instant - self.start).total_seconds() / self.seconds_per_px

    def t_of(self, x: float) -> datetime:
        return self.start + timedelta(seconds=x * self.seconds_per_px)

    def contains(self, instant: datetime) -> bool:
        return self.start <= instant <= self.end

    def zoomed(self, factor: float, about_x: float) -> Viewport:
        """Zoom in (``factor`` > 1) or out, keeping the instant under ``about_x`` where it is."""
        anchor = self.t_of(about_x)
        seconds = self.span.total_seconds() / factor
        seconds = min(max(seconds, MIN_SPAN.total_seconds()), MAX_SPAN.total_seconds())
        fraction = about_x / max(self.width, 1.0)
        start = anchor - timedelta(seconds=seconds * fraction)
        return Viewport(start, start + timedelta(seconds=seconds), self.width)

    def panned(self, dx: float) -> Viewport:
        """Drag the picture ``dx`` pixels to the right (earlier times come into view)."""
        shift = timedelta(seconds=dx * self.seconds_per_px)
        return Viewport(self.start - shift, self.end - shift, self.width)

    def resized(self, width: float) -> Viewport:
        """The same stretch of time across a new width."""
        return Viewport(self.start, self.end, width)


def fit(instants: Sequence[datetime], width: float, *, margin: float = 0.04) -> Viewport | None:
    """A viewport showing every instant with a small margin each side; None without instants."""
    if not instants:
        return None
    lo, hi = min(instants), max(instants)
    span = max(hi - lo, timedelta(hours=2))
    pad = span * margin
    centre = lo + (hi - lo) / 2
    half = span / 2 + pad
    return Viewport(centre - half, centre + half, width)


def tick_step(viewport: Viewport, min_px: float = 70.0) -> timedelta:
    """The finest step whose ticks are at least ``min_px`` apart."""
    for step in TICK_STEPS:
        if step.total_seconds() / viewport.seconds_per_px >= min_px:
            return step
    return TICK_STEPS[-1]


def _floor_local(local: datetime, step: timedelta) -> datetime:
    """The wall time at or before ``local`` where a tick of ``step`` falls."""
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    if step < timedelta(days=1):
        seconds = int((local - midnight).total_seconds())
        size = int(step.total_seconds())
        return midnight + timedelta(seconds=seconds - seconds % size)
    if step == timedelta(days=7) or step == timedelta(days=14):
        return midnight - timedelta(days=midnight.weekday())
    if step == timedelta(days=364):
        return midnight.replace(month=1, day=1)
    if step == timedelta(days=91):
        return midnight.replace(month=(midnight.month - 1) // 3 * 3 + 1, day=1)
    if step == timedelta(days=28):
        return midnight.replace(day=1)
    return midnight


def _next_local(local: datetime, step: timedelta) -> datetime:
    if step == timedelta(days=28):
        return local.replace(year=local.year + local.month // 12, month=local.month % 12 + 1)
    if step == timedelta(days=91):
        month = local.month + 3
        return local.replace(year=local.year + (month - 1) // 12, month=(month - 1) % 12 + 1)
    if step == timedelta(days=364):
        return local.replace(year=local.year + 1, month=1)
    return local + step


def _to_utc(local: datetime, zone: tzinfo) -> datetime | None:
    """The instant a wall time names (its first reading), or None inside a gap."""
    instant = local.replace(tzinfo=zone).astimezone(UTC)
    back = instant.astimezone(zone).replace(tzinfo=None)
    return instant if back == local else None


def local_ticks(viewport: Viewport, zone: tzinfo, step: timedelta) -> list[tuple[datetime, datetime]]:
    """Ticks at round wall-clock times of ``zone``: (instant in UTC, naive wall time).

    Wall times that do not exist (in a gap) get no tick; a repeated wall time
    gets one, at its first reading. At most :data:`MAX_TICKS`.
    """
    local = _floor_local(viewport.start.astimezone(zone).replace(tzinfo=None), step)
    out: list[tuple[datetime, datetime]] = []
    guard = 0
    while len(out) < MAX_TICKS and guard < MAX_TICKS * 4:
        guard += 1
        instant = _to_utc(local, zone)
        if instant is not None:
            if instant > viewport.end:
                break
            if instant >= viewport.start:
                out.append((instant, local))
        local = _next_local(local, step)
    return out


@dataclass(frozen=True)
class Band:
    """A stretch of time during which the zone keeps one offset."""

    start: datetime
    end: datetime
    offset: timedelta
    abbreviation: str


def offset_bands(start: datetime, end: datetime, zone: tzinfo, changes: Sequence[Transition]) -> list[Band]:
    """Split ``[start, end]`` at the ``changes`` that fall inside it (sorted by instant)."""
    inside = [t for t in sorted(changes, key=lambda t: t.utc) if start < t.utc < end]
    first = start.astimezone(zone)
    offset, abbreviation = first.utcoffset() or timedelta(0), first.tzname() or ""
    bands = []
    left = start
    for change in inside:
        bands.append(Band(left, change.utc, offset, abbreviation))
        left, offset, abbreviation = change.utc, change.offset_after, change.abbr_after
    bands.append(Band(left, end, offset, abbreviation))
    return bands


def fold_spans(changes: Sequence[Transition]) -> list[tuple[datetime, datetime]]:
    """For each fall-back change, the instants whose wall times happen twice.

    A fold of length d at instant T repeats the wall times of ``[T − d, T)``
    during ``[T, T + d)``: both readings are shaded.
    """
    return [(t.utc - t.delta, t.utc + t.delta) for t in changes if t.kind == "fold"]


def nearest(xs: Sequence[float], x: float, radius: float) -> int | None:
    """The index of the value in sorted ``xs`` closest to ``x``, if within ``radius``."""
    if not xs:
        return None
    i = bisect.bisect_left(xs, x)
    best: int | None = None
    for j in (i - 1, i):
        if 0 <= j < len(xs) and abs(xs[j] - x) <= radius and (best is None or abs(xs[j] - x) < abs(xs[best] - x)):
            best = j
    return best
