"""The life of an occurrence in the ledger (docs/contract.md §4) and of a schedule's gate.

```
PLANNED -> DUE -> DISPATCHING -> RUNNING -> SUCCEEDED
                     |              |-> RETRY_WAIT -> DISPATCHING ...
                     |              |-> FAILED              (attempts used up)
                     `--------------`-> UNKNOWN_EFFECT -> SUCCEEDED | RETRY_WAIT | FAILED (by reconciliation)
terminal facts: SKIPPED_GAP SKIPPED_FOLD SKIPPED_DUPLICATE SKIPPED_OVERLAP EXCLUDED MISFIRE_EXPIRED CANCELLED
```

:data:`TRANSITIONS` is the diagram as data; :func:`check_transition` refuses
anything else. It is a bug, not a user mistake, when code asks for a move the
diagram does not have, so :class:`IllegalTransition` is no ``UserError``.
"""

from __future__ import annotations

from enum import StrEnum

from core.enums import Status
from core.errors import TidemarkError


class OccurrenceState(StrEnum):
    """Where an occurrence stands. Values are what the ledger stores."""

    PLANNED = "PLANNED"
    """Materialized; its dispatch time has not come."""
    DUE = "DUE"
    """Its dispatch time has come; waiting to be claimed."""
    DISPATCHING = "DISPATCHING"
    """Claimed by one engine (compare-and-set); the process is being started."""
    RUNNING = "RUNNING"
    """The task's process runs."""
    SUCCEEDED = "SUCCEEDED"
    """Exit 0, a probe said it happened, or a person said so."""
    RETRY_WAIT = "RETRY_WAIT"
    """A failed or lost attempt; the next one waits for its backoff."""
    FAILED = "FAILED"
    """Attempts used up, or a person abandoned it."""
    UNKNOWN_EFFECT = "UNKNOWN_EFFECT"
    """A non-idempotent task's outcome was lost; waits for a person or a probe."""
    SKIPPED_GAP = "SKIPPED_GAP"
    """Its wall time does not exist (gapPolicy SKIP)."""
    SKIPPED_FOLD = "SKIPPED_FOLD"
    """The reading of a repeated wall time that foldPolicy leaves out."""
    SKIPPED_DUPLICATE = "SKIPPED_DUPLICATE"
    """Its instant or business period belongs to another occurrence (named in the reason)."""
    SKIPPED_OVERLAP = "SKIPPED_OVERLAP"
    """overlapPolicy said not to start it while another run went on."""
    EXCLUDED = "EXCLUDED"
    """Listed in the revision's ``exclude``."""
    MISFIRE_EXPIRED = "MISFIRE_EXPIRED"
    """Missed beyond what misfirePolicy or catchUpWindow allows to run late."""
    CANCELLED = "CANCELLED"
    """Not started when a newer revision took over its position; its slot is free again."""


class ScheduleState(StrEnum):
    """The gate of a whole schedule."""

    ACTIVE = "active"
    """Materialized and dispatched."""
    PAUSED = "paused"
    """Still materialized (so that the misfire policy sees what was missed), not dispatched."""
    DISABLED = "disabled"
    """Neither materialized nor dispatched until resumed."""


class EngineKind(StrEnum):
    """Where an engine runs: inside the desktop app, or ``schedctl engine run``."""

    APP = "app"
    HEADLESS = "headless"


class EnginePresence(StrEnum):
    """What an engine said about itself in its latest heartbeat."""

    RUNNING = "running"
    PAUSED = "paused"
    RETIRED = "retired"


class OccurrenceKind(StrEnum):
    """Why an occurrence exists."""

    SCHEDULED = "scheduled"
    """Materialized from a revision's rule."""
    MANUAL = "manual"
    """A person asked to run it now (a random id)."""
    BACKFILL = "backfill"
    """An explicit, recorded run of a past range."""
    CARRIED = "carried"
    """A business period kept across a cutover at the superseded run's time (core.ledger.period_carry)."""


_S = OccurrenceState

#: Every allowed move. Beyond the diagram's arrows: a not-yet-started occurrence
#: can be cancelled by a newer revision, or expired by the misfire policy (PLANNED
#: directly, when an outage hid its DUE moment); a DUE one can be skipped by the
#: overlap policy; a claim whose outcome is lost before the process was seen to
#: run (DISPATCHING) is settled like a lost RUNNING one (invariant 5), including a
#: verify probe that says it happened (SUCCEEDED).
TRANSITIONS: dict[OccurrenceState, frozenset[OccurrenceState]] = {
    _S.PLANNED: frozenset({_S.DUE, _S.CANCELLED, _S.MISFIRE_EXPIRED}),
    _S.DUE: frozenset({_S.DISPATCHING, _S.CANCELLED, _S.MISFIRE_EXPIRED, _S.SKIPPED_OVERLAP}),
    _S.DISPATCHING: frozenset({_S.RUNNING, _S.SUCCEEDED, _S.RETRY_WAIT, _S.FAILED, _S.UNKNOWN_EFFECT}),
    _S.RUNNING: frozenset({_S.SUCCEEDED, _S.RETRY_WAIT, _S.FAILED, _S.UNKNOWN_EFFECT}),
    _S.RETRY_WAIT: frozenset({_S.DISPATCHING}),
    _S.UNKNOWN_EFFECT: frozenset({_S.SUCCEEDED, _S.RETRY_WAIT, _S.FAILED}),
    _S.SUCCEEDED: frozenset(),
    _S.FAILED: frozenset(),
    _S.SKIPPED_GAP: frozenset(),
    _S.SKIPPED_FOLD: frozenset(),
    _S.SKIPPED_DUPLICATE: frozenset(),
    _S.SKIPPED_OVERLAP: frozenset(),
    _S.EXCLUDED: frozenset(),
    _S.MISFIRE_EXPIRED: frozenset(),
    _S.CANCELLED: frozenset(),
}

#: States with no way out.
TERMINAL: frozenset[OccurrenceState] = frozenset(s for s, nxt in TRANSITIONS.items() if not nxt)

#: Nothing has been started for these: a newer revision may cancel them.
NOT_STARTED: frozenset[OccurrenceState] = frozenset({_S.PLANNED, _S.DUE})

#: Claimable by compare-and-set (invariant 3).
CLAIMABLE: frozenset[OccurrenceState] = frozenset({_S.DUE, _S.RETRY_WAIT})

#: Facts decided at materialization: the occurrence exists but was never meant to run.
BORN_SKIPPED: frozenset[OccurrenceState] = frozenset(
    {_S.SKIPPED_GAP, _S.SKIPPED_FOLD, _S.SKIPPED_DUPLICATE, _S.EXCLUDED}
)

#: Holds its logical slot: every state but CANCELLED (a row without a slot holds none).
SLOT_RELEASING: frozenset[OccurrenceState] = frozenset({_S.CANCELLED})

#: Gives its business period back: never runnable, cancelled, or ended without
#: fulfilling the period (expired, skipped for overlap, failed), so that a
#: backfill may still fulfil it. Waiting, running, succeeded or uncertain ones hold it.
PERIOD_RELEASING: frozenset[OccurrenceState] = (
    BORN_SKIPPED | SLOT_RELEASING | frozenset({_S.MISFIRE_EXPIRED, _S.SKIPPED_OVERLAP, _S.FAILED})
)

#: What an expansion row's status becomes when it is materialized.
FROM_STATUS: dict[Status, OccurrenceState] = {
    Status.SCHEDULED: _S.PLANNED,
    Status.SHIFTED: _S.PLANNED,
    Status.SKIPPED_GAP: _S.SKIPPED_GAP,
    Status.SKIPPED_FOLD: _S.SKIPPED_FOLD,
    Status.SKIPPED_DUPLICATE: _S.SKIPPED_DUPLICATE,
    Status.EXCLUDED: _S.EXCLUDED,
}


class IllegalTransition(TidemarkError):
    """Code asked for a state change the diagram does not allow (a bug)."""


def can_transition(old: OccurrenceState, new: OccurrenceState) -> bool:
    """Whether ``old -> new`` is an arrow of the diagram."""
    return new in TRANSITIONS[old]


def check_transition(old: OccurrenceState, new: OccurrenceState, occurrence_id: str | None = None) -> None:
    """Raise :class:`IllegalTransition` unless ``old -> new`` is allowed."""
    if not can_transition(old, new):
        allowed = ", ".join(sorted(TRANSITIONS[old])) or "nothing (it is terminal)"
        who = f"{occurrence_id}: " if occurrence_id else ""
        raise IllegalTransition(f"{who}{old} cannot become {new}; from {old} only {allowed}")


def sql_in_list(states: frozenset[OccurrenceState]) -> str:
    """``'A', 'B'`` for a partial index predicate (the values are fixed identifiers)."""
    return ", ".join(f"'{s.value}'" for s in sorted(states))
