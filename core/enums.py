"""The policy and status vocabularies of scheduleSpec.v1, member by member."""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    CALENDAR = "calendar"
    """An RFC 5545 rule expanded on the local wall clock."""
    INTERVAL = "interval"
    """Instants ``anchor + k*every``: elapsed time, blind to the wall clock."""
    AFTER_COMPLETION = "after_completion"
    """The next run is due ``delay`` after the previous one finished."""


class GapPolicy(StrEnum):
    SKIP = "SKIP"
    """A wall time that does not exist (clocks jump forward) produces no run."""
    SHIFT_FORWARD = "SHIFT_FORWARD"
    """Run at the first valid wall time after the gap (the transition instant)."""
    SHIFT_BY_GAP = "SHIFT_BY_GAP"
    """Read the wall time with the offset in force before the gap (moves it forward by the gap's length)."""


class FoldPolicy(StrEnum):
    FIRST_ONLY = "FIRST_ONLY"
    """A wall time that happens twice (clocks fall back) runs at its first reading only."""
    SECOND_ONLY = "SECOND_ONLY"
    """Runs at the second reading only."""
    BOTH = "BOTH"
    """Runs at both readings."""


class InvalidDatePolicy(StrEnum):
    OMIT = "OMIT"
    """A date that does not exist (April 31) produces no run (RFC 5545)."""
    BACKWARD = "BACKWARD"
    """Move it to the last valid day before (April 30)."""
    FORWARD = "FORWARD"
    """Move it to the first valid day after (May 1)."""


class TzdbPolicy(StrEnum):
    FOLLOW = "FOLLOW"
    """Occurrences not materialized yet follow the installed tz database (the law as it changes)."""
    PIN = "PIN"
    """The zone's rules as published, kept with the revision, on every host (reproducible)."""


class HolidayPolicy(StrEnum):
    SKIP = "SKIP"
    """A nominal date that is not a business day does not run (EXCLUDED)."""
    NEXT_BUSINESS_DAY = "NEXT_BUSINESS_DAY"
    """It runs on the next business day at the same wall time (SHIFTED)."""
    PREVIOUS_BUSINESS_DAY = "PREVIOUS_BUSINESS_DAY"
    """It runs on the previous business day at the same wall time (SHIFTED)."""


class MisfirePolicy(StrEnum):
    SKIP = "SKIP"
    """Occurrences missed by more than the lateness window are expired, none run."""
    CATCH_UP_ALL = "CATCH_UP_ALL"
    """Every missed occurrence runs, oldest first, one at a time."""
    CATCH_UP_BOUNDED = "CATCH_UP_BOUNDED"
    """The newest ``maxCatchUp`` missed occurrences run; the rest are expired."""


class OverlapPolicy(StrEnum):
    ALLOW = "ALLOW"
    """Start even while an earlier occurrence of the same schedule still runs."""
    SKIP = "SKIP"
    """Record the new occurrence as SKIPPED_OVERLAP."""
    QUEUE_ONE = "QUEUE_ONE"
    """Keep one waiting until the running one ends; skip the rest."""
    QUEUE_ALL = "QUEUE_ALL"
    """Keep all waiting and run them in order."""


class Effect(StrEnum):
    NONE = "none"
    """The task changes nothing outside itself: safe to run again."""
    IDEMPOTENT = "idempotent"
    """Running it twice has the effect of running it once."""
    NON_IDEMPOTENT = "non_idempotent"
    """Running it twice does something twice (sends two emails): never re-sent blindly."""


class AlertKind(StrEnum):
    """What an alert route is told of: an occurrence entering one of these states."""

    FAILED = "FAILED"
    """The task failed and its attempts are used up."""
    UNKNOWN_EFFECT = "UNKNOWN_EFFECT"
    """A non_idempotent task's outcome was lost: a person must say whether it happened."""
    MISFIRE_EXPIRED = "MISFIRE_EXPIRED"
    """The occurrence was missed (the engine was down or late) and the misfire policy expired it."""


class Status(StrEnum):
    """What the expansion says about one occurrence (docs/contract.md §2)."""

    SCHEDULED = "SCHEDULED"
    SHIFTED = "SHIFTED"
    SKIPPED_GAP = "SKIPPED_GAP"
    SKIPPED_FOLD = "SKIPPED_FOLD"
    SKIPPED_DUPLICATE = "SKIPPED_DUPLICATE"
    EXCLUDED = "EXCLUDED"

    @property
    def runnable(self) -> bool:
        # Identity checks: enum hashing and equality are slow on the hot path.
        return self is Status.SCHEDULED or self is Status.SHIFTED
