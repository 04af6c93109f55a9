"""Expansion: the occurrences of a compiled schedule in a range of positions.

``expand(compiled, start, end)`` is pure: the same arguments give the same rows
on every machine, and ``expand(a, c) == expand(a, b) + expand(b, c)``.

The pipeline: nominal wall times (from the rule, or the interval's instants)
-> business days (a closed date skipped or moved, :mod:`core.calendar.business_days`)
-> resolution in the zone (gap/fold policies) -> exclusions -> ordering by
(positionUtc, nominalLocal, foldOrdinal) -> collisions on one instant ->
repeated business periods -> the requested window.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import operator
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, cast
from zoneinfo import ZoneInfo

from core.enums import FoldPolicy, GapPolicy, Kind, Status
from core.errors import ComputeLimitError
from core.identity import IdFactory, jitter_seconds
from core.recurrence.compile import CompiledSchedule, CountHint
from core.recurrence.fast import FastRule, Resolver, fast_nominals, fast_rule, fast_walls
from core.recurrence.occurrence import Occurrence
from core.recurrence.resolve import Reading, resolve
from core.time.durations import human_duration
from core.time.formats import fmt_clock, fmt_local, fmt_utc
from core.time.zones import ZoneIndex, shifted, transitions, zone_index

if TYPE_CHECKING:  # business periods' own module loads only for a spec with businessPeriod
    from core.recurrence.periods import Kept, PeriodMarks, PeriodState

#: How far positions can stray from a nominal wall time read as UTC at most
#: (offsets up to about ±16 h in the historic data, plus a gap of up to a day):
#: the bound used where the zone's own offsets are not looked up.
_DRIFT = timedelta(days=2)
#: The offsets of a year are read from this much before it to this much after it.
_YEAR_MARGIN = timedelta(days=3)
#: ... every 12 hours (as :func:`core.time.zones.transitions` reads them), from 28 December before
#: the year to 6 January after it (the margin above, and the largest offset on either side).
_SAMPLES = [timedelta(hours=12 * k) for k in range(2 * (366 + 9) + 1)]
#: Released rows :func:`_ordered` keeps in its buffer before dropping them: few enough that a row
#: is let go before the garbage collector's youngest generation is next examined (every 700 new
#: objects that can hold others, a couple of hundred rows). Rows kept longer outlive it, reach the
#: oldest generation, and make the collector walk everything the process holds every so often
#: (a tenth of a long preview's time when it was 4096).
_RELEASED_KEPT = 64
#: Times of day of a fast rule whose rows are ordered with :data:`_DRIFT` as the greatest offset
#: (:func:`_ordered`): a few rows a day are held two days, not each year's offsets looked up
#: (a quarter of a millisecond a year, a microsecond a row of a daily rule).
_FEW_TIMES = 4
#: Nominal times an expansion may visit before it gives up with a clear error.
DEFAULT_SCAN_LIMIT = 20_000_000


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_NAIVE = datetime(1970, 1, 1)


class _RowMaker:
    """Attaches identity to readings; per-schedule constants are looked up once.

    Without ``ids`` (a reader that shows no ids, such as the table) a row's occurrence id is
    ``""`` and its slot id None, unless the ids decide something the reader sees: a jitter
    (the delay comes from the occurrence id) or business periods (a duplicate's reason names
    its period's winner). Rows colliding on one instant get theirs when they are settled
    (:func:`_settle`), whose reasons name the winner."""

    __slots__ = ("ids", "jitter", "revision", "schedule_id", "with_ids")

    def __init__(self, compiled: CompiledSchedule, ids: bool = True) -> None:
        spec = compiled.facts
        self.schedule_id = spec.schedule_id
        self.revision = spec.revision
        self.ids = IdFactory(self.schedule_id, self.revision)
        self.jitter = int(spec.jitter.total_seconds())
        self.with_ids = ids or bool(self.jitter) or bool(spec.business_period)

    def __call__(self, nominal: datetime, r: Reading) -> Occurrence:
        nominal_local = nominal.isoformat() if not nominal.microsecond else fmt_local(nominal)
        with_ids = self.with_ids
        occ = self.ids.occurrence(nominal_local, r.fold_ordinal) if with_ids else ""
        resolved_utc = slot = None
        delay = 0
        if r.resolved is not None:
            resolved_utc = (_EPOCH_NAIVE + (r.resolved - _EPOCH)).isoformat() + "Z"
            slot = self.ids.slot(resolved_utc) if with_ids else None
            if self.jitter:
                delay = jitter_seconds(occ, self.jitter)
        return Occurrence(
            self.schedule_id,
            self.revision,
            nominal,
            r.fold_ordinal,
            r.status,
            r.resolved,
            r.position,
            r.offset,
            r.abbreviation,
            r.reason,
            occ,
            slot,
            nominal_local,
            resolved_utc,
            None,
            delay,
        )


def _visited_too_many(limit: int) -> ComputeLimitError:
    return ComputeLimitError(f"the expansion visited {limit:,} times without finishing; ask for a shorter range")


def _exclude(row: Occurrence) -> None:
    _excluded(row, f"excluded: {row.nominal_local} is listed in exclude" + (f" ({row.reason})" if row.reason else ""))


def _excluded(row: Occurrence, reason: str) -> None:
    row.reason = reason
    row.status = Status.EXCLUDED
    row.resolved = None
    row.resolved_utc = None
    row.logical_slot_id = None
    row.dispatch_delay = 0


def _joined(*reasons: str | None) -> str | None:
    """Reasons in the order their decisions were taken, ``; `` between them."""
    return "; ".join(r for r in reasons if r) or None


def _business_day(row: Occurrence, moved: str | None, reason: str, *, skipped: bool) -> None:
    """A row whose nominal date is not a business day: skipped (EXCLUDED) or moved (SHIFTED).
    Its reason tells the date's story in order: the invalid-date move (``moved``), the business
    day, then the clock change at the new date (a skipped row meets no clock)."""
    if skipped:  # the date decides first: a gap or fold on a closed day is not the reason
        _excluded(row, _joined(moved, reason) or reason)
        return
    row.reason = _joined(moved, reason, row.reason)
    if row.status is Status.SCHEDULED:
        row.status = Status.SHIFTED


def _calendar_rows(
    compiled: CompiledSchedule,
    make: _RowMaker,
    fast: FastRule | None,
    from_local: datetime | None,
    limit: int,
    hint: CountHint | None,
) -> Iterator[Occurrence]:
    zone, name = compiled.zone, compiled.facts.time_zone
    index = compiled.index or zone_index(name)
    gap, fold = compiled.gap_policy, compiled.fold_policy
    excludes = bool(compiled.excluded_dates or compiled.excluded_times)
    days = compiled.business_days
    if days is not None and from_local is not None:
        from_local = days.earliest_from(from_local)
    nominals: Iterable[tuple[datetime, str | None]]
    resolve_at: Callable[[datetime], list[Reading]]
    if fast is not None and days is None and not excludes:
        yield from _plain_rows(compiled, make, fast_walls(fast, from_local), limit)
        return
    if fast is not None:  # date arithmetic, the same times as the rule's rrule
        nominals, resolve_at = fast_nominals(fast, from_local), Resolver(zone, name, gap, fold)
    else:
        nominals = compiled.nominals(from_local, hint=hint)
        resolve_at = functools.partial(_resolve_wall, zone, name, gap, fold, index)
    scanned = 0
    for nominal, moved in nominals:
        scanned += 1
        if scanned > limit:
            raise _visited_too_many(limit)
        place = days.place(nominal) if days is not None else None
        wall = nominal if place is None or place.wall is None else place.wall
        for reading in resolve_at(wall):
            row = make(nominal, reading)
            if place is not None and place.reason is not None:
                _business_day(row, moved, place.reason, skipped=place.wall is None)
            elif moved:
                row.reason = _joined(moved, row.reason)
            if excludes and compiled.is_excluded(nominal):
                _exclude(row)
            yield row


def _plain_rows(
    compiled: CompiledSchedule, make: _RowMaker, walls: Iterable[tuple[datetime, datetime]], limit: int
) -> Iterator[Occurrence]:
    """:func:`_calendar_rows` of a fast rule without business days or exclusions: a wall time
    that exists once (its two readings, ``walls`` gives both, have one offset) becomes its row
    here, what ``make`` would make of its only reading without building the reading; the others
    are resolved by :class:`Resolver`."""
    zone = compiled.zone
    general = Resolver(zone, compiled.facts.time_zone, compiled.gap_policy, compiled.fold_policy)
    utcoffset, tzname = zone.utcoffset, zone.tzname
    schedule_id, revision, jitter, scheduled = make.schedule_id, make.revision, make.jitter, Status.SCHEDULED
    row_ids = make.ids.row_ids if make.with_ids else None
    for scanned, (nominal, second) in enumerate(walls, 1):
        if scanned > limit:
            raise _visited_too_many(limit)
        off = utcoffset(nominal)
        if off is not None and off == utcoffset(second):
            nominal_local = nominal.isoformat()
            utc = nominal - off
            instant = _EPOCH + (utc - _EPOCH_NAIVE)
            resolved_utc = utc.isoformat() + "Z"
            occ, slot = row_ids(nominal_local, resolved_utc) if row_ids is not None else _NO_IDS
            yield Occurrence(
                schedule_id,
                revision,
                nominal,
                0,
                scheduled,
                instant,
                instant,
                off,
                tzname(nominal),
                None,
                occ,
                slot,
                nominal_local,
                resolved_utc,
                None,
                jitter_seconds(occ, jitter) if jitter else 0,
            )
        else:
            for reading in general(nominal):
                yield make(nominal, reading)


#: The ids of a row made without them (:class:`_RowMaker`).
_NO_IDS: tuple[str, None] = ("", None)


def _resolve_wall(
    zone: ZoneInfo, name: str, gap: GapPolicy, fold: FoldPolicy, index: ZoneIndex, wall: datetime
) -> list[Reading]:
    return resolve(zone, name, wall, gap, fold, index)


def _interval_rows(
    compiled: CompiledSchedule, make: _RowMaker, from_utc: datetime | None, limit: int
) -> Iterator[Occurrence]:
    spec = compiled.facts
    assert spec.every is not None and spec.anchor is not None
    zone = compiled.zone
    k = 0
    if from_utc is not None and from_utc > spec.anchor:
        k = math.floor((from_utc - spec.anchor) / spec.every)
    excludes = bool(compiled.excluded_dates or compiled.excluded_times)
    for scanned in range(limit + 1):
        if scanned == limit:
            raise _visited_too_many(limit)
        instant = spec.anchor + k * spec.every
        k += 1
        local = instant.astimezone(zone)
        nominal = local.replace(tzinfo=None)
        if compiled.until is not None and nominal > compiled.until:
            # A fall-back can bring wall times below ``end`` again: stop only
            # once the instant is past every reading of the end wall time.
            if instant > _EPOCH + (compiled.until - _EPOCH_NAIVE) + _DRIFT:
                return
            continue
        reading = Reading(local.fold, Status.SCHEDULED, instant, instant, local.utcoffset(), local.tzname(), None)
        if local.fold:
            reading = Reading(
                1,
                Status.SCHEDULED,
                instant,
                instant,
                local.utcoffset(),
                local.tzname(),
                f"{fmt_clock(nominal)} happens twice on {nominal:%Y-%m-%d} in {spec.time_zone}; "
                f"this is its second reading ({local.tzname()}), {fmt_utc(instant)}",
            )
        row = make(nominal, reading)
        if excludes and compiled.is_excluded(nominal):
            _exclude(row)
        yield row


@functools.lru_cache(maxsize=4096)
def _offset_bounds(zone: ZoneInfo, year: int) -> tuple[timedelta, timedelta]:
    """The least and greatest UTC offsets ``zone`` uses from three days before
    ``year`` to three days after it (zero and zero for UTC).

    Every row's position is its nominal wall time read as UTC minus one of the
    offsets in force near it (a gap's or a fold's reading uses the offset on one
    side of the change). So a row at or after ``start`` has a nominal at or after
    ``start`` plus the least offset near it, and a row whose nominal comes later
    than ``nominal`` lies at or after ``nominal`` minus the greatest offset near it.
    """
    if str(zone.key) == "UTC":
        return timedelta(0), timedelta(0)
    if not 1 < year < 9999:
        return -_DRIFT, _DRIFT
    # The offset on the wall clock every 12 hours (a C call each, with no instant to build);
    # only where two readings differ are the changes between them found, any number of them.
    walls = list(map(datetime(year - 1, 12, 28).__add__, _SAMPLES))
    read = list(map(zone.utcoffset, walls))
    held = set(read)
    held.discard(None)
    offsets = cast("set[timedelta]", held)
    for i in itertools.compress(itertools.count(), map(operator.ne, read, read[1:])):
        (a, before), (b, after) = (walls[i], read[i]), (walls[i + 1], read[i + 1])
        assert before is not None and after is not None
        # The instants whose wall times lie from a to b, with a second to spare.
        lo = (a - max(before, after)).replace(tzinfo=UTC) - timedelta(seconds=1)
        hi = (b - min(before, after)).replace(tzinfo=UTC) + timedelta(seconds=1)
        offsets.update(tr.offset_after for tr in transitions(zone, lo, hi))
    return min(offsets), max(offsets)


def _until_calendar_ends(rows: Iterator[Occurrence]) -> Iterator[Occurrence]:
    """The rows of ``rows`` up to the end (or before the start) of the calendar:
    a wall time or instant past year 9999 does not exist, so the schedule ends there."""
    try:
        yield from rows
    except OverflowError:
        return


def _after_completion_rows(compiled: CompiledSchedule, make: _RowMaker) -> Iterator[Occurrence]:
    """Only the first appointment is known in advance; later ones follow completions."""
    spec = compiled.facts
    assert spec.start is not None and spec.delay is not None
    for reading in resolve(compiled.zone, spec.time_zone, spec.start, compiled.gap_policy, compiled.fold_policy):
        row = make(spec.start, reading)
        note = f"first appointment; each later run is due {human_duration(spec.delay)} after the previous one finishes"
        row.reason = note if row.reason is None else f"{row.reason}; {note}"
        yield row


def _ordered(
    rows: Iterable[Occurrence],
    zone: ZoneInfo,
    floor: Callable[[datetime], datetime] | None = None,
    greatest: timedelta | None = None,
) -> Iterator[Occurrence]:
    """Reorder a nominal-ordered stream by (position, nominalLocal, foldOrdinal)
    and settle collisions: runnable rows on one instant keep one winner.

    Rows mostly arrive in order already (they only disagree near a clock
    change), so they are appended to a buffer and only the stragglers are
    inserted by bisection. A row is released once no later nominal time can
    produce a row before it (the zone's greatest offset near it says how far
    back that can be; ``floor``, when given, the earliest wall time a later
    nominal can be moved to); rows released on the same position form a group.
    ``greatest``, when given, is an offset no row's exceeds, taken instead of each year's
    greatest: a larger one only holds rows longer, and they come out the same.
    """
    buf: list[tuple[tuple[datetime, str, int], Occurrence]] = []
    append = buf.append
    head = 0
    year = 0
    base = _EPOCH_NAIVE
    group: list[Occurrence] = []
    at: datetime | None = None  # the group's position
    for row in rows:
        key = (row.position, row.nominal_local, row.fold_ordinal)
        if len(buf) == head or buf[-1][0] <= key:
            append((key, row))
        else:
            bisect.insort(buf, (key, row), lo=head, key=lambda entry: entry[0])
        low = row.nominal if floor is None else floor(row.nominal)
        if low.year != year:
            year = low.year
            base = _EPOCH_NAIVE + (_offset_bounds(zone, year)[1] if greatest is None else greatest)
        # Any later row lies at or after (its nominal read as UTC) - the greatest offset near it.
        try:
            safe = _EPOCH + (low - base)
        except OverflowError:  # at the calendar's end: hold the rest until the stream ends
            continue
        if buf[head][0][0] >= safe:
            continue
        while head < len(buf):
            held, ready = buf[head]
            position = held[0]
            if position >= safe:
                break
            head += 1
            if position == at:
                group.append(ready)
                continue
            if len(group) == 1:
                yield group[0]
            elif group:
                yield from _settle(group)
            group, at = [ready], position
        if head > _RELEASED_KEPT:
            del buf[:head]
            head = 0
    for _, ready in buf[head:]:
        if group and ready.position != group[0].position:
            yield from _settle(group)
            group = []
        group.append(ready)
    yield from _settle(group)


def _resolved_wall_matches(row: Occurrence) -> bool:
    local = row.resolved_local
    return local is not None and local == row.nominal


def _duplicate(row: Occurrence, winner: Occurrence | Kept, why: str, taken: str) -> None:
    """``row`` yields to ``winner``; a row moved there (a holiday, a missing date or time) says so first:
    "2027-11-25 is Thanksgiving Day in US-NY: moved to …, Fri 2027-11-26, which already runs: …"."""
    row.status = Status.SKIPPED_DUPLICATE
    held = f"{why} as {winner.occurrence_id} (nominal {winner.nominal_local}), which keeps it"
    row.reason = f"{row.reason}, {taken}: {held}" if row.reason else held
    row.resolved = None
    row.resolved_utc = None
    row.logical_slot_id = None
    row.dispatch_delay = 0


def _pick_winner(group: list[Occurrence]) -> Occurrence:
    exact = [r for r in group if _resolved_wall_matches(r)]
    pool = exact or group
    return min(pool, key=lambda r: (r.nominal_local, r.fold_ordinal))


@functools.lru_cache(maxsize=64)
def _id_factory(schedule_id: str, revision: int) -> IdFactory:
    return IdFactory(schedule_id, revision)


def _with_ids(rows: list[Occurrence]) -> None:
    """Gives the rows made without ids (:class:`_RowMaker`) theirs: a duplicate's reason names its winner."""
    for row in rows:
        if not row.occurrence_id:
            ids = _id_factory(row.schedule_id, row.revision)
            row.occurrence_id = ids.occurrence(row.nominal_local, row.fold_ordinal)
            if row.resolved_utc is not None:
                row.logical_slot_id = ids.slot(row.resolved_utc)


def _settle(rows: list[Occurrence]) -> list[Occurrence]:
    if len(rows) == 1:
        return rows
    _with_ids(rows)
    runnable = [r for r in rows if r.runnable]
    if len(runnable) > 1:
        winner = _pick_winner(runnable)
        for r in runnable:
            if r is not winner:
                _duplicate(r, winner, f"resolves to the same instant ({winner.resolved_utc})", "which already runs")
    return rows


def _periods(
    rows: Iterable[Occurrence], template: str, seed: PeriodState | None = None, marks: PeriodMarks | None = None
) -> Iterator[Occurrence]:
    """Runnable rows sharing a business period: one keeps it, the rest are duplicates.

    Rows of one period are held until the period changes, then settled together.
    A period that comes back after another one keeps its earlier winner. ``seed``
    holds the winners settled before its first row; ``marks`` hears of each
    period's start and each new winner (:mod:`core.recurrence.periods`).
    """
    winners: dict[str, Occurrence | Kept] = dict(seed.winners) if seed is not None else {}
    if marks is not None and seed is not None:
        marks.winners.update(seed.winners)
    held: list[Occurrence] = []
    current: str | None = None
    for row in rows:
        row.period = template.format(nominal=row.nominal)
        if row.runnable and row.period != current:
            settled = _settle_period(held, current, winners, marks)
            if marks is not None:
                marks.start(row.position)
            yield from settled
            held = []
            current = row.period
        held.append(row)
    yield from _settle_period(held, current, winners, marks)


def _settle_period(
    held: list[Occurrence], period: str | None, winners: dict[str, Occurrence | Kept], marks: PeriodMarks | None
) -> list[Occurrence]:
    if period is None:
        return held
    group = [r for r in held if r.runnable and r.period == period]
    if not group:
        return held
    winner = winners.get(period)
    if winner is None:
        winner = winners[period] = _pick_winner(group)
        if marks is not None:
            marks.won(period, winner.occurrence_id, winner.nominal_local)
    for r in group:
        if r is not winner:
            _duplicate(r, winner, f"falls in the same business period ({period})", "whose period already has a run")
    return held


def nominal_floor(compiled: CompiledSchedule, start: datetime) -> datetime:
    """A wall time no row at or after the instant ``start`` has its nominal before."""
    # A row at or after ``start`` has a nominal at or after ``start`` plus the least offset near it.
    local = shifted(start, _offset_bounds(compiled.zone, start.year)[0]).replace(tzinfo=None)
    days = compiled.business_days
    return days.earliest_from(local) if days is not None else local


def iter_rows(
    compiled: CompiledSchedule,
    start: datetime | None = None,
    *,
    scan_limit: int = DEFAULT_SCAN_LIMIT,
    count_hint: CountHint | None = None,
    periods: PeriodState | None = None,
    marks: PeriodMarks | None = None,
    ids: bool = True,
) -> Iterator[Occurrence]:
    """Every row with positionUtc >= ``start`` (aware), in order, without end.

    ``count_hint`` lets a rule with COUNT resume its count there instead of at DTSTART
    (see :meth:`CompiledSchedule.count_position`); the rows are the same. With
    ``businessPeriod``, rows are settled from the schedule's beginning, or from
    ``periods`` when it lies at or before ``start``; ``marks`` follows the periods
    (see :mod:`core.recurrence.periods`). ``ids=False``, for a reader that shows no ids, leaves
    them out where nothing it shows depends on them (:class:`_RowMaker`)."""
    spec = compiled.facts
    period = spec.business_period
    make = _RowMaker(compiled, ids)
    # Business periods are settled from the schedule's beginning (or a state kept of it),
    # so that a row's status never depends on where a listing starts.
    seed = periods if period and periods is not None and start is not None and periods.at <= start else None
    from_utc = seed.at if seed is not None else None if (start is None or period) else start
    days = compiled.business_days
    greatest = None
    if spec.kind is Kind.CALENDAR:
        fast = fast_rule(compiled)
        if fast is not None and days is None and len(fast.times) <= _FEW_TIMES:
            greatest = _DRIFT  # a few rows a day: held two days, without each year's offsets
        from_local = None
        if from_utc is not None:
            from_local = shifted(from_utc, _offset_bounds(compiled.zone, from_utc.year)[0]).replace(tzinfo=None)
        rows: Iterator[Occurrence] = _until_calendar_ends(
            _calendar_rows(compiled, make, fast, from_local, scan_limit, count_hint)
        )
    elif spec.kind is Kind.INTERVAL:
        # positions are the interval's instants
        rows = _until_calendar_ends(_interval_rows(compiled, make, from_utc, scan_limit))
    else:
        rows = _after_completion_rows(compiled, make)
    rows = _ordered(rows, compiled.zone, days.floor if days is not None else None, greatest)
    if period:
        if seed is not None:  # the periods before ``seed.at`` are in its winners
            rows = (row for row in rows if row.position >= seed.at)
        rows = _periods(rows, period, seed, marks)
    # The rows come in the order of their positions: those before ``start`` are dropped, and the
    # rows end at the schedule's end (each step in C once it holds).
    if start is not None:
        rows = itertools.dropwhile(functools.partial(_before, start), rows)
    end_utc = compiled.end_utc
    if end_utc is not None:
        rows = itertools.takewhile(functools.partial(_at_or_before, end_utc), rows)
    yield from rows


def _before(instant: datetime, row: Occurrence) -> bool:
    return row.position < instant


def _at_or_before(instant: datetime, row: Occurrence) -> bool:
    return row.position <= instant


def expand(
    compiled: CompiledSchedule,
    start: datetime,
    end: datetime,
    *,
    scan_limit: int = DEFAULT_SCAN_LIMIT,
    count_hint: CountHint | None = None,
    periods: PeriodState | None = None,
) -> list[Occurrence]:
    """Rows with ``start <= positionUtc < end`` (``count_hint``, ``periods``: see :func:`iter_rows`)."""
    out = []
    for row in iter_rows(compiled, start, scan_limit=scan_limit, count_hint=count_hint, periods=periods):
        if row.position >= end:
            break
        out.append(row)
    return out


def first_rows(
    compiled: CompiledSchedule, start: datetime, count: int, *, scan_limit: int = DEFAULT_SCAN_LIMIT
) -> list[Occurrence]:
    """The first ``count`` rows (of any status) with positionUtc >= ``start``."""
    out: list[Occurrence] = []
    if count <= 0:
        return out
    for row in iter_rows(compiled, start, scan_limit=scan_limit):
        out.append(row)
        if len(out) >= count:
            break
    return out
