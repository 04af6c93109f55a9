"""Misfire decisions (CONTRACT §4, invariant 6), as a pure function.

Given the occurrences that were due while nothing ran, the engine and the
designer's what-if view both ask :func:`plan_recovery` which ones run late and
which expire. Nothing here reads a clock or a database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from core.durations import format_duration
from core.enums import MisfirePolicy


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
                bound_text = max_catch_up if max_catch_up is not None else 1
                why = f"only the newest {bound_text} are made up (misfirePolicy CATCH_UP_BOUNDED)"
            out.append(
                Decision(d.occurrence_id, d.due, Action.EXPIRE, f"missed by more than latenessWindow ({window}); {why}")
            )
    return out
