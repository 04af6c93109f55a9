"""A worker's outcome and its next claim: on PostgreSQL one statement (``WITH settled AS
(UPDATE …), claimed AS (UPDATE … AND EXISTS (SELECT FROM settled)) SELECT …``), on SQLite two.
Whatever moved between the claim and the outcome, both databases end the same way: the claim
applies only with the outcome, and still refuses a gate moved, another run in flight or a fence
(docs/contract.md §4, invariants 2 and 3)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from core.clock import FixedClock
from core.engine import settle, statements
from core.engine.admin import fence
from core.engine.context import PassReport
from core.engine.engine import Engine
from core.engine.runner import RunResult
from core.ledger.db import Ledger
from core.ledger.models import Attempt, Event, Occurrence
from core.ledger.publish import pause, publish
from core.ledger.states import OccurrenceState as S

from . import engine_stages as stages
from . import spec, utc

SID = "daily-ops-summary"


def _two_due(ledger: Ledger, clock: FixedClock) -> tuple[Engine, list[str]]:
    """An hourly schedule with two runs due (03:00 and 04:00 New York) and an engine that saw them."""
    with ledger.write() as session:
        publish(session, spec(rule="FREQ=HOURLY;BYMINUTE=0", cutoverAt="2026-03-02T06:30:00Z", task=stages.TRUE), clock)
    engine = Engine(ledger, clock)
    engine.run_once()
    clock.set(utc("2026-03-02T09:00:10Z"))
    stages.promote(engine, PassReport())
    with ledger.read() as session:
        due = session.execute(
            select(Occurrence.occurrence_id).where(Occurrence.state == S.DUE).order_by(Occurrence.nominal_local)
        )
        return engine, list(due.scalars())


def _another_in_flight(ledger: Ledger, clock: FixedClock) -> None:
    """A later run of the schedule is RUNNING (under another claim)."""
    with ledger.write() as session:
        later = session.scalars(
            select(Occurrence.occurrence_id).where(Occurrence.state == S.PLANNED).order_by(Occurrence.nominal_local)
        ).first()
        session.execute(update(Occurrence).where(Occurrence.occurrence_id == later).values(state=S.RUNNING))


def _paused(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        pause(session, SID, clock, note="a look first")


def _fenced(ledger: Ledger, clock: FixedClock) -> None:
    fence(ledger, clock, note="host lost")


def _nothing(ledger: Ledger, clock: FixedClock) -> None:
    pass


#: What moved between the first claim and its outcome -> (the first run's state, the second's,
#: whether the worker holds a claim of the second, the epoch of its attempt, the first's last event).
CASES: dict[str, tuple[Callable[[Ledger, FixedClock], None], tuple[S, S, bool, int | None, str]]] = {
    "nothing": (_nothing, (S.SUCCEEDED, S.DISPATCHING, True, 1, "occurrence.transitioned")),
    "the schedule paused": (_paused, (S.SUCCEEDED, S.DUE, False, None, "occurrence.transitioned")),
    "another run in flight": (_another_in_flight, (S.SUCCEEDED, S.DUE, False, None, "occurrence.transitioned")),
    "a fence": (_fenced, (S.DISPATCHING, S.DUE, False, None, "attempt.ignored")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_next_claim_applies_only_with_the_outcome_and_as_a_claim_of_its_own(
    ledger: Ledger, clock: FixedClock, case: str
) -> None:
    perturb, (first_state, second_state, claimed, epoch, last_kind) = CASES[case]
    engine, (first, second) = _two_due(ledger, clock)
    gate = stages.gate(engine, SID)
    assert gate is not None
    claim = stages.claim(engine, first, PassReport(), gate=gate, state=S.DUE)
    assert claim is not None
    perturb(ledger, clock)
    now = clock.now()
    result = RunResult(now, now + timedelta(seconds=1), 0, None, None, "", "", None)
    tried: list[bool] = []
    real = statements.settle_then_claim

    def joined(*args: Any) -> bool:
        tried.append(True)
        return real(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(statements, "settle_then_claim", joined)
        following = settle.finish(
            lambda: ledger.write(serialize=False),
            engine.context,
            claim,
            result,
            PassReport(),
            queue=deque([(second, S.DUE)]),
            gate=gate,
        )
    assert bool(tried) is (ledger.dialect == "postgresql")  # one statement there, two on SQLite
    with ledger.read() as session:
        states = {oid: state for oid, state in session.execute(select(Occurrence.occurrence_id, Occurrence.state))}
        attempts = session.scalars(select(Attempt).where(Attempt.occurrence_id == second)).all()
        last = session.scalars(select(Event.kind).where(Event.occurrence_id == first).order_by(Event.id.desc())).first()
    assert (states[first], states[second], following is not None, last) == (
        first_state,
        second_state,
        claimed,
        last_kind,
    )
    assert [a.execution_epoch for a in attempts] == ([] if epoch is None else [epoch])
    if following is not None:
        assert (following.occurrence_id, following.epoch, following.attempt_number) == (second, epoch, 1)
