"""Resolution of a nominal wall time to instants in a zone (docs/contract.md §2).

candidates(L) are the UTC instants whose wall time in the zone is L: none
(a gap), one, or two (a fold). The gap and fold policies then decide which
rows exist and with which status. Everything comes from the zone data, so
gaps and folds of any length, at any time of day, are handled alike.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import NamedTuple
from zoneinfo import ZoneInfo

from core.enums import FoldPolicy, GapPolicy, Status
from core.time.durations import human_duration
from core.time.formats import fmt_clock
from core.time.zones import Transition, ZoneIndex, find_change


class Reading(NamedTuple):
    """One row a wall time resolves to (before identity is attached)."""

    fold_ordinal: int
    status: Status
    resolved: datetime | None  # aware UTC
    position: datetime  # aware UTC
    offset: timedelta | None
    abbreviation: str | None
    reason: str | None


def _valid(zone: ZoneInfo, local: datetime, instant: datetime) -> bool:
    return instant.astimezone(zone).replace(tzinfo=None) == local


def candidates(zone: ZoneInfo, local: datetime) -> list[datetime]:
    """Every aware UTC instant whose wall time in ``zone`` equals ``local``, earliest first."""
    aware = local.replace(tzinfo=zone)
    off0 = aware.utcoffset()
    off1 = aware.replace(fold=1).utcoffset()
    assert off0 is not None and off1 is not None
    first = (local - off0).replace(tzinfo=UTC)
    if off0 == off1:
        return [first]
    second = (local - off1).replace(tzinfo=UTC)
    out = sorted({u for u in (first, second) if _valid(zone, local, u)})
    return out


def _when(dt: datetime, ref: datetime) -> str:
    """Clock time, with the date when it differs from the reference's date."""
    return fmt_clock(dt) if dt.date() == ref.date() else f"{dt:%Y-%m-%d} {fmt_clock(dt)}"


def gap_transition(zone: ZoneInfo, local: datetime) -> Transition:
    """The transition that skips over ``local`` (which must lie in a gap)."""
    aware = local.replace(tzinfo=zone)
    off_before = aware.utcoffset()
    off_after = aware.replace(fold=1).utcoffset()
    assert off_before is not None and off_after is not None
    lo = (local - off_after).replace(tzinfo=UTC)
    hi = (local - off_before).replace(tzinfo=UTC)
    return find_change(zone, lo, hi)


def fold_transition(zone: ZoneInfo, local: datetime) -> Transition:
    """The transition that repeats ``local`` (which must lie in a fold)."""
    first, second = candidates(zone, local)
    return find_change(zone, first, second)


def _jump_text(tr: Transition, zone_name: str, local: datetime) -> str:
    verb = "jump" if tr.kind == "gap" else "fall back"
    ref = local if tr.local_before.date() == tr.local_after.date() else datetime.min
    return (
        f"clocks {verb} from {_when(tr.local_before, ref)} {tr.abbr_before} "
        f"to {_when(tr.local_after, ref)} {tr.abbr_after}"
    )


def gap_reason(zone_name: str, local: datetime, tr: Transition) -> str:
    return f"{fmt_clock(local)} does not exist on {local:%Y-%m-%d} in {zone_name}: {_jump_text(tr, zone_name, local)}"


def fold_reason(zone_name: str, local: datetime, tr: Transition) -> str:
    return f"{fmt_clock(local)} happens twice on {local:%Y-%m-%d} in {zone_name}: {_jump_text(tr, zone_name, local)}"


def _reading(instant: datetime, zone: ZoneInfo) -> tuple[timedelta, str]:
    local = instant.astimezone(zone)
    off = local.utcoffset()
    assert off is not None
    return off, local.tzname() or ""


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_NAIVE = datetime(1970, 1, 1)


def resolve(
    zone: ZoneInfo,
    zone_name: str,
    local: datetime,
    gap: GapPolicy,
    fold: FoldPolicy,
    index: ZoneIndex | None = None,
) -> list[Reading]:
    """The rows a nominal wall time produces under the given policies.

    ``index`` (the zone's :class:`ZoneIndex`) lets wall times far from any
    offset change take a fast path with a single offset lookup.
    """
    if index is not None and not index.near_change(local):
        off = zone.utcoffset(local)
        assert off is not None
        # Aware arithmetic from a fixed epoch is several times cheaper than replace().
        instant = _EPOCH + (local - off - _EPOCH_NAIVE)
        return [Reading(0, Status.SCHEDULED, instant, instant, off, zone.tzname(local), None)]
    aware = local.replace(tzinfo=zone)
    off0 = aware.utcoffset()
    assert off0 is not None
    off1 = aware.replace(fold=1).utcoffset()
    if off0 == off1:
        # The common case, far from any transition: exactly one instant.
        instant = (local - off0).replace(tzinfo=UTC)
        return [Reading(0, Status.SCHEDULED, instant, instant, off0, aware.tzname(), None)]
    found = candidates(zone, local)
    if len(found) == 1:
        instant = found[0]
        off, abbr = _reading(instant, zone)
        return [Reading(0, Status.SCHEDULED, instant, instant, off, abbr, None)]
    if not found:
        return [_resolve_gap(zone, zone_name, local, gap)]
    return _resolve_fold(zone, zone_name, local, found, fold)


def _resolve_gap(zone: ZoneInfo, zone_name: str, local: datetime, gap: GapPolicy) -> Reading:
    tr = gap_transition(zone, local)
    # The instant the wall time would occupy: read with the offset in force before the gap.
    pre_gap = (local - tr.offset_before).replace(tzinfo=UTC)
    base = gap_reason(zone_name, local, tr)
    if gap is GapPolicy.SKIP:
        return Reading(0, Status.SKIPPED_GAP, None, pre_gap, None, None, base)
    if gap is GapPolicy.SHIFT_FORWARD:
        instant = tr.utc
        off, abbr = _reading(instant, zone)
        reason = (
            f"{base}; shifted to {_when(tr.local_after, local)} {abbr}, the first valid time after the gap"
            " (gapPolicy SHIFT_FORWARD)"
        )
        return Reading(0, Status.SHIFTED, instant, instant, off, abbr, reason)
    instant = pre_gap
    off, abbr = _reading(instant, zone)
    moved = (instant + off).replace(tzinfo=None)
    reason = (
        f"{base}; shifted by the gap's length ({human_duration(tr.delta)}) to {_when(moved, local)} {abbr}"
        " (gapPolicy SHIFT_BY_GAP)"
    )
    return Reading(0, Status.SHIFTED, instant, instant, off, abbr, reason)


def _resolve_fold(
    zone: ZoneInfo, zone_name: str, local: datetime, found: list[datetime], fold: FoldPolicy
) -> list[Reading]:
    tr = find_change(zone, found[0], found[1])
    base = fold_reason(zone_name, local, tr)
    rows = []
    for ordinal, instant in enumerate(found):
        off, abbr = _reading(instant, zone)
        which = "first" if ordinal == 0 else "second"
        runs = fold is FoldPolicy.BOTH or (fold is FoldPolicy.FIRST_ONLY) == (ordinal == 0)
        if runs:
            if fold is FoldPolicy.BOTH:
                note = f"runs at both readings; this is the {which} ({abbr}) (foldPolicy BOTH)"
            else:
                note = f"runs at the {which} reading ({abbr}) only (foldPolicy {fold.value})"
            rows.append(Reading(ordinal, Status.SCHEDULED, instant, instant, off, abbr, f"{base}; {note}"))
        else:
            note = f"the {which} reading ({abbr}) is skipped (foldPolicy {fold.value})"
            rows.append(Reading(ordinal, Status.SKIPPED_FOLD, None, instant, off, abbr, f"{base}; {note}"))
    return rows
