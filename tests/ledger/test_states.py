"""The occurrence state diagram of docs/contract.md §4, as data, and its guard."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from core.clock import FixedClock
from core.enums import Status
from core.ledger import events
from core.ledger.db import Ledger
from core.ledger.materialize import materialize
from core.ledger.models import Event, Occurrence
from core.ledger.publish import publish
from core.ledger.states import (
    CLAIMABLE,
    FROM_STATUS,
    NOT_STARTED,
    TERMINAL,
    TRANSITIONS,
    IllegalTransition,
    OccurrenceState,
    can_transition,
    check_transition,
)

from . import NOW, occurrences, spec

S = OccurrenceState

#: The arrows drawn in the contract's diagram; every one must be allowed.
DIAGRAM = [
    (S.PLANNED, S.DUE),
    (S.DUE, S.DISPATCHING),
    (S.DISPATCHING, S.RUNNING),
    (S.RUNNING, S.SUCCEEDED),
    (S.RUNNING, S.RETRY_WAIT),
    (S.RETRY_WAIT, S.DISPATCHING),
    (S.RUNNING, S.FAILED),
    (S.DISPATCHING, S.UNKNOWN_EFFECT),
    (S.RUNNING, S.UNKNOWN_EFFECT),
    (S.UNKNOWN_EFFECT, S.SUCCEEDED),
    (S.UNKNOWN_EFFECT, S.RETRY_WAIT),
    (S.UNKNOWN_EFFECT, S.FAILED),
]


@pytest.mark.parametrize(("old", "new"), DIAGRAM, ids=[f"{a}->{b}" for a, b in DIAGRAM])
def test_every_arrow_of_the_diagram_is_allowed(old: OccurrenceState, new: OccurrenceState) -> None:
    assert can_transition(old, new)
    check_transition(old, new)


def test_terminal_facts_have_no_way_out() -> None:
    assert {
        S.SUCCEEDED,
        S.FAILED,
        S.SKIPPED_GAP,
        S.SKIPPED_FOLD,
        S.SKIPPED_DUPLICATE,
        S.SKIPPED_OVERLAP,
        S.EXCLUDED,
        S.MISFIRE_EXPIRED,
        S.CANCELLED,
    } == TERMINAL
    assert set(TRANSITIONS) == set(S)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(S.PLANNED, S.RUNNING, id="skip_the_claim"),
        pytest.param(S.RUNNING, S.CANCELLED, id="cancel_a_started_run"),
        pytest.param(S.RETRY_WAIT, S.CANCELLED, id="cancel_a_claimed_retry"),
        pytest.param(S.SUCCEEDED, S.RETRY_WAIT, id="rerun_a_success"),
        pytest.param(S.UNKNOWN_EFFECT, S.DISPATCHING, id="resend_blindly"),
        pytest.param(S.CANCELLED, S.PLANNED, id="revive_a_cancelled_one"),
    ],
)
def test_moves_off_the_diagram_are_refused(old: OccurrenceState, new: OccurrenceState) -> None:
    assert not can_transition(old, new)
    with pytest.raises(IllegalTransition, match=f"occ-x: {old} cannot become {new}"):
        check_transition(old, new, "occ-x")


def test_named_groups() -> None:
    assert {S.PLANNED, S.DUE} == NOT_STARTED
    assert {S.DUE, S.RETRY_WAIT} == CLAIMABLE
    assert {FROM_STATUS[s] for s in (Status.SCHEDULED, Status.SHIFTED)} == {S.PLANNED}
    assert set(FROM_STATUS) == set(Status)


def test_a_transition_updates_the_row_and_writes_its_event(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(), clock)
        materialize(session, "daily-ops-summary", clock)
    with ledger.write() as session:
        occ = occurrences(session)[0]
        events.transition(session, occ, S.DUE, NOW, data={"attempt": 1})
        with pytest.raises(IllegalTransition):
            events.transition(session, occ, S.SUCCEEDED, NOW)
    with ledger.read() as session:
        stored = session.get(Occurrence, occ.occurrence_id)
        assert stored is not None and stored.state is S.DUE
        last = session.scalars(select(Event).order_by(Event.id.desc())).first()
    assert last is not None
    assert (last.kind, last.occurrence_id) == ("occurrence.transitioned", occ.occurrence_id)
    assert last.data == {"from": "PLANNED", "to": "DUE", "reason": None, "attempt": 1}
