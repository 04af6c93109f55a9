"""Misfire decisions (docs/contract.md §4, invariant 6), as a pure function.

Given the occurrences that were due while nothing ran, the engine and the
designer's what-if view both ask :func:`plan_recovery` which ones run late and
which expire. After a long outage the engine first asks :func:`certain_expiry`
where the occurrences whose fate is already certain end, so that they are
recorded as one expired range instead of one row each. Nothing here reads a
clock or a database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from core.enums import Kind, MisfirePolicy
from core.ledger.expired import ExpiryCut, fixed_offset
from core.recurrence.compile import CompiledSchedule, CountHint
from core.recurrence.expand import expand
from core.recurrence.fast import fast_nominals, fast_rule
from core.recurrence.periods import PeriodState
from core.time.durations import format_duration


class Action(StrEnum):
    RUN = "RUN"
    """Not late: runs as usual."""
    CATCH_UP = "CATCH_UP"
    """Late, but the policy makes it up (one at a time, oldest first)."""
    EXPIRE = "EXPIRE"
    """Late, and the policy or catchUpWindow lets it go: MISFIRE_EXPIRED."""


@dataclass(frozen=True)
class Due:
    """An occurrence that has come due: its id and dispatch time."""

    occurrence_id: str
    due: datetime


@dataclass(frozen=True)
class Decision:
    occurrence_id: str
    due: datetime
    action: Action
    reason: str | None


def plan_recovery(
    due: Sequence[Due],
    now: datetime,
    policy: MisfirePolicy,
    *,
    max_catch_up: int | None,
    lateness_window: timedelta,
    catch_up_window: timedelta | None = None,
) -> list[Decision]:
    """Decide, oldest first, what happens to each occurrence that has come due by ``now``.

    An occurrence is a misfire when ``now`` is later than its due time plus the
    lateness window. Misfires older than ``catch_up_window`` always expire;
    the rest follow ``policy``. The number of CATCH_UP decisions never exceeds
    ``max_catch_up`` under CATCH_UP_BOUNDED.
    """
    ordered = sorted(due, key=lambda d: (d.due, d.occurrence_id))
    late = [d for d in ordered if now > d.due + lateness_window]
    late_ids = {d.occurrence_id for d in late}
    expired_by_age: set[str] = set()
    if catch_up_window is not None:
        expired_by_age = {d.occurrence_id for d in late if d.due < now - catch_up_window}
    eligible = [d for d in late if d.occurrence_id not in expired_by_age]
    if policy is MisfirePolicy.SKIP:
        chosen: set[str] = set()
    elif policy is MisfirePolicy.CATCH_UP_ALL:
        chosen = {d.occurrence_id for d in eligible}
    else:
        bound = max_catch_up if max_catch_up is not None else 1
        chosen = {d.occurrence_id for d in eligible[len(eligible) - bound :]} if bound > 0 else set()
    window = format_duration(lateness_window)
    out = []
    for d in ordered:
        if d.occurrence_id not in late_ids:
            out.append(Decision(d.occurrence_id, d.due, Action.RUN, None))
        elif d.occurrence_id in expired_by_age:
            assert catch_up_window is not None
            reason = f"missed by more than catchUpWindow ({format_duration(catch_up_window)}); never run late"
            out.append(Decision(d.occurrence_id, d.due, Action.EXPIRE, reason))
        elif d.occurrence_id in chosen:
            reason = f"missed by more than latenessWindow ({window}); made up late (misfirePolicy {policy.value})"
            out.append(Decision(d.occurrence_id, d.due, Action.CATCH_UP, reason))
        else:
            if policy is MisfirePolicy.SKIP:
                why = "misfirePolicy SKIP runs no missed occurrence"
            else:
                why = f"{newest_made_up(bound)} (misfirePolicy CATCH_UP_BOUNDED)"
            out.append(
                Decision(d.occurrence_id, d.due, Action.EXPIRE, f"missed by more than latenessWindow ({window}); {why}")
            )
    return out


def newest_made_up(bound: int) -> str:
    """``only the newest run is made up``, ``only the newest 2 are made up``."""
    return "only the newest run is made up" if bound == 1 else f"only the newest {bound:,} are made up"


#: Where the search for the newest maxCatchUp late occurrences starts, before doubling.
_FIRST_SPAN = timedelta(hours=1)


def certain_expiry(
    compiled: CompiledSchedule,
    search_from: datetime,
    now: datetime,
    hint: CountHint | None = None,
    periods: PeriodState | None = None,
) -> ExpiryCut | None:
    """The position before which every occurrence is certain to expire at ``now``,
    whatever is materialized: the rows :func:`plan_recovery` would expire anyway.

    * misfirePolicy SKIP: every occurrence late by ``now`` (due + latenessWindow
      passed), i.e. every one positioned before now - latenessWindow - jitter;
    * CATCH_UP_BOUNDED: every occurrence older than the newest ``maxCatchUp``
      late ones (found among the active revision's rows from ``search_from``;
      when fewer exist there, none is certain);
    * any policy with catchUpWindow: every one positioned before
      now - catchUpWindow - jitter.

    CATCH_UP_ALL without catchUpWindow expires nothing for sure: None. The
    jitter margin keeps the cut exact although dispatch times move by up to
    ``jitter`` from positions. A rule with COUNT resumes its count at ``hint``
    (a place in the count at or before ``search_from``: the one the ledger
    stores for the schedule) instead of walking from DTSTART, and business
    periods are settled from ``periods`` (the state stored with the cursor: see
    :mod:`core.recurrence.periods`). Pure: no clock, no ledger.
    """
    spec = compiled.facts
    jitter = spec.jitter or timedelta(0)
    window = format_duration(spec.lateness_window)
    late_before = now - spec.lateness_window - jitter
    cuts: list[ExpiryCut] = []
    if spec.catch_up_window is not None:
        reason = f"missed by more than catchUpWindow ({format_duration(spec.catch_up_window)}); never run late"
        cuts.append(ExpiryCut(now - spec.catch_up_window - jitter, "catchUpWindow", reason))
    policy = spec.misfire_policy
    bound = spec.effective_max_catch_up
    if policy is MisfirePolicy.SKIP or (policy is MisfirePolicy.CATCH_UP_BOUNDED and not bound):
        why = f"missed by more than latenessWindow ({window}); misfirePolicy {policy.value} runs no missed occurrence"
        cuts.append(ExpiryCut(late_before, policy.value, why))
    elif policy is MisfirePolicy.CATCH_UP_BOUNDED and bound:
        newest = _kth_newest_runnable(compiled, search_from, late_before, bound, hint, periods)
        if newest is not None:
            why = (
                f"missed by more than latenessWindow ({window}); "
                f"{newest_made_up(bound)} (misfirePolicy CATCH_UP_BOUNDED)"
            )
            cuts.append(ExpiryCut(newest - jitter, policy.value, why))
    if not cuts:
        return None
    return max(cuts, key=lambda c: c.before)


def _kth_newest_runnable(
    compiled: CompiledSchedule, lo: datetime, hi: datetime, k: int, hint: CountHint | None, periods: PeriodState | None
) -> datetime | None:
    """The position of the k-th newest runnable row in [lo, hi), looking back from
    ``hi`` over doubling spans (never expanding from ``lo`` itself unless it must).
    Nothing is expanded when the range is empty (the schedule is materialized past ``hi``)."""
    if lo >= hi:
        return None
    span = _FIRST_SPAN
    while True:
        start = max(lo, hi - span)
        rows = _runnable_positions(compiled, start, hi, hint, periods)
        if len(rows) >= k:
            return rows[-k]
        if start <= lo:
            return None
        span *= 2


def _runnable_positions(
    compiled: CompiledSchedule, lo: datetime, hi: datetime, hint: CountHint | None, periods: PeriodState | None = None
) -> list[datetime]:
    """Positions of the runnable rows in [lo, hi), in order. Where the zone's offset
    is fixed and only the rule shapes the rows, straight from the rule's times (by date
    arithmetic where :func:`~core.recurrence.fast.fast_rule` can expand the rule)."""
    offset = fixed_offset(compiled, lo, hi) if compiled.facts.kind is Kind.CALENDAR else None
    if offset is None or compiled.facts.start is None:
        return [row.position for row in expand(compiled, lo, hi, count_hint=hint, periods=periods) if row.runnable]
    out = []
    after = (lo + offset).replace(tzinfo=None)
    fast = fast_rule(compiled)  # date arithmetic where it gives the rule's times, not the rrule's walk
    walls = fast_nominals(fast, after) if fast is not None else compiled.nominals(after, hint=hint)
    for when, _moved in walls:
        position = (when - offset).replace(tzinfo=UTC)
        if position >= hi or (compiled.end_utc is not None and position > compiled.end_utc):
            break
        if position >= lo:
            out.append(position)
    return out
