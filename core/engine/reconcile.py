"""A person's decision about an UNKNOWN_EFFECT occurrence, recorded with a note
(settled by :func:`core.engine.settle.settle`, like every outcome)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from core.clock import Clock
from core.engine.outcomes import Outcome
from core.engine.settle import Settling, settle
from core.errors import UserError
from core.ledger.access import writing
from core.ledger.compiled import stored_run
from core.ledger.db import Ledger
from core.ledger.models import Occurrence, Revision
from core.ledger.states import OccurrenceState
from core.team.actor import Actor

_S = OccurrenceState


class Decision(StrEnum):
    HAPPENED = "happened"
    """The effect took place: SUCCEEDED."""
    NOT_HAPPENED = "not-happened"
    """It did not: RETRY_WAIT, due at once (even when the attempts were used up: a person asked)."""
    ABANDON = "abandon"
    """Give up on it: FAILED."""


_TARGET = {Decision.HAPPENED: _S.SUCCEEDED, Decision.NOT_HAPPENED: _S.RETRY_WAIT, Decision.ABANDON: _S.FAILED}


class ReconcileError(UserError):
    """The occurrence cannot be reconciled (unknown, or not waiting for a decision)."""


@dataclass(frozen=True)
class Reconciled:
    occurrence_id: str
    old: OccurrenceState
    new: OccurrenceState


def reconcile(
    ledger: Ledger,
    occurrence_id: str,
    decision: Decision,
    clock: Clock,
    note: str | None = None,
    actor: Actor | None = None,
) -> Reconciled:
    """Resolve an UNKNOWN_EFFECT occurrence by a person's decision (``actor``'s; default:
    this process's OS user and host)."""
    now = clock.now()
    with writing(ledger, actor) as session:
        occ = session.get(Occurrence, occurrence_id, populate_existing=True)
        if occ is None:
            raise ReconcileError(f"{occurrence_id}: no such occurrence in this ledger")
        if occ.state is not _S.UNKNOWN_EFFECT:
            raise ReconcileError(
                f"{occurrence_id} is {occ.state.value}, not UNKNOWN_EFFECT; only an unknown effect needs reconciling"
            )
        target = _TARGET[decision]
        if target is _S.RETRY_WAIT:
            from core.engine.orphans import live_attempt

            orphan = live_attempt(session, occurrence_id)
            if orphan is not None:
                raise ReconcileError(
                    f"{occurrence_id}: {orphan.describe()}; a retry would run beside it: "
                    "wait until it ends (or end it), then decide"
                )
        reason = f"reconciled by a person: {decision.value}" + (f" ({note})" if note else "")
        revision = session.get(Revision, (occ.schedule_id, occ.revision))
        assert revision is not None
        outcome = Outcome(target, reason, timedelta(0) if target is _S.RETRY_WAIT else None)
        settle(
            session,
            Settling(occ.schedule_id, occurrence_id, occ.state),
            outcome,
            now,
            stored_run(revision.spec_json),
            data={"decision": decision.value, "note": note},
        )
        return Reconciled(occurrence_id, _S.UNKNOWN_EFFECT, target)
