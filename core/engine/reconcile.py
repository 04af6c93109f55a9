"""A person's decision about an UNKNOWN_EFFECT occurrence, recorded with a note."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.clock import Clock
from core.enums import Kind
from core.errors import UserError
from core.ledger import events
from core.ledger.db import Ledger
from core.ledger.models import Occurrence, Revision
from core.ledger.states import OccurrenceState

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
    ledger: Ledger, occurrence_id: str, decision: Decision, clock: Clock, note: str | None = None
) -> Reconciled:
    """Resolve an UNKNOWN_EFFECT occurrence by a person's decision."""
    now = clock.now()
    with ledger.write() as session:
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
        events.transition(session, occ, target, now, reason, {"decision": decision.value, "note": note})
        occ.retry_at = now if target is _S.RETRY_WAIT else None
        if target is not _S.RETRY_WAIT:
            occ.finished_at = now
            spec_json = session.get(Revision, (occ.schedule_id, occ.revision))
            if spec_json is not None:
                from core.engine.chain import schedule_next
                from core.engine.engine import stored_spec

                spec = stored_spec(spec_json.spec_json)
                if spec.kind is Kind.AFTER_COMPLETION:
                    schedule_next(session, occ, spec, now)
        return Reconciled(occurrence_id, _S.UNKNOWN_EFFECT, target)
