"""Two engines on one ledger and one schedule's backlog: the engine whose claim runs the
schedule works through its backlog (claiming the next with each outcome); a worker of the other
that finds an occurrence it read claimed since stops trying the rest, one careful claim (one
write transaction) instead of one per occurrence (docs/decisions.md, "A backlog another engine
runs"). A schedule whose every due run waits for another engine's run in flight gets no worker
at all (docs/decisions.md, "A backlog behind another engine's run"). Both databases."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.clock import FixedClock
from core.engine import claim as claim_stage
from core.engine.context import PassReport
from core.engine.engine import Engine, EngineOptions
from core.ledger.db import Ledger
from core.ledger.models import Attempt, Occurrence
from core.ledger.states import OccurrenceState

from .engine_stages import execute, gate, promote
from .test_dropped_connections import backlog

_S = OccurrenceState


def _backlog(ledger: Ledger, clock: FixedClock, runs: int) -> tuple[Engine, Engine, list[str]]:
    """A schedule with ``runs`` runs due (the earlier one run), two engines, and the due runs' ids."""
    first = backlog(ledger, clock, runs)
    promote(first, PassReport())
    with ledger.read() as session:
        ready = claim_stage.claimable(session, clock.now(), schedule_id="backlog")
    assert len(ready) == runs
    return first, Engine(ledger, clock, EngineOptions(max_workers=1)), [oid for _, oid, _ in ready]


def counted_writes(ledger: Ledger) -> tuple[list[int], Callable[[], AbstractContextManager[Session]]]:
    """A write factory for claims that counts the transactions it opens."""
    opened = [0]

    def write() -> AbstractContextManager[Session]:
        opened[0] += 1
        return ledger.write(serialize=False)

    return opened, write


def _attempts(ledger: Ledger) -> dict[str, int]:
    with ledger.read() as session:
        rows = session.execute(select(Attempt.occurrence_id, func.count()).group_by(Attempt.occurrence_id))
        return {oid: int(n) for oid, n in rows}


def test_a_worker_that_finds_its_backlog_taken_stops_trying(ledger: Ledger, clock: FixedClock) -> None:
    """The other engine read the backlog, then the first ran its next occurrence: the other's
    claim of it finds it taken (one careful claim) and tries none of the rest until its next
    dispatch, which claims what is left."""
    running, other, due = _backlog(ledger, clock, 4)
    seen = gate(other, "backlog")
    report = PassReport()
    held = claim_stage.claim(running.ledger.write, running.context, due[0], report, gate=seen, state=_S.DUE)
    assert held is not None
    execute(running, held, report)
    opened, write = counted_writes(ledger)
    for occurrence_id in due:  # the other engine's worker walking what it read
        assert claim_stage.claim(write, other.context, occurrence_id, report, gate=seen, state=_S.DUE) is None
    assert opened == [1]  # the first found it taken; the rest opened no transaction
    assert other.context.elsewhere == {"backlog"}
    assert other.run_once().outcomes == {"SUCCEEDED": 3}
    assert other.context.elsewhere == set()
    with ledger.read() as session:
        states = set(session.scalars(select(Occurrence.state).where(Occurrence.occurrence_id.in_(due))))
    assert states == {_S.SUCCEEDED}
    assert set(_attempts(ledger).values()) == {1}


def test_one_engine_alone_never_sets_a_schedule_aside(ledger: Ledger, clock: FixedClock) -> None:
    """Alone, an engine's careful claims (a run it finished itself, a claim it still holds) set
    nothing aside."""
    engine, _other, _due = _backlog(ledger, clock, 3)
    report = engine.run_once()
    assert report.outcomes == {"SUCCEEDED": 3}
    assert engine.context.elsewhere == set()


@contextmanager
def claims_tried(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The occurrences a worker tries to claim (the one-statement claim or the careful one)."""
    tried: list[str] = []
    real = claim_stage.claim_in

    def counted(session: Session, ctx: Any, occurrence_id: str, *args: Any, **kwargs: Any) -> Any:
        tried.append(occurrence_id)
        return real(session, ctx, occurrence_id, *args, **kwargs)

    monkeypatch.setattr(claim_stage, "claim_in", counted)
    yield tried
    monkeypatch.setattr(claim_stage, "claim_in", real)


def _states(ledger: Ledger, ids: list[str]) -> dict[str, OccurrenceState]:
    with ledger.read() as session:
        rows = session.execute(
            select(Occurrence.occurrence_id, Occurrence.state).where(Occurrence.occurrence_id.in_(ids))
        )
        return {oid: state for oid, state in rows}


def test_a_backlog_behind_another_engines_run_gets_no_worker(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One engine runs the schedule's oldest due run; every other due run came due before that
    run started, so each waits for it (overlapPolicy SKIP writes nothing for them). The other
    engine's pass tries no claim of them (it used to walk them, one careful claim each), and
    changes nothing; once the run ended, it runs them all."""
    running, other, due = _backlog(ledger, clock, 4)
    report = PassReport()
    seen = gate(running, "backlog")
    held = claim_stage.claim(running.ledger.write, running.context, due[0], report, gate=seen, state=_S.DUE)
    assert held is not None
    with claims_tried(monkeypatch) as tried:
        passed = other.run_once()
    assert tried == []
    assert passed.started == 0 and passed.skipped_overlap == 0
    assert _states(ledger, due) == {due[0]: _S.DISPATCHING} | {oid: _S.DUE for oid in due[1:]}
    execute(running, held, report)
    assert other.run_once().outcomes == {"SUCCEEDED": 3}
    assert set(_attempts(ledger).values()) == {1}


def test_a_run_due_after_the_other_engines_run_began_still_gets_its_overlap_policy(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same, and one more run came due after the other engine's run started: that one
    overlaps it, so a worker is started and its policy (SKIP) records it SKIPPED_OVERLAP; the
    runs due before it still wait."""
    running, other, due = _backlog(ledger, clock, 3)
    report = PassReport()
    seen = gate(running, "backlog")
    held = claim_stage.claim(running.ledger.write, running.context, due[0], report, gate=seen, state=_S.DUE)
    assert held is not None
    clock.set(clock.now() + timedelta(minutes=1))
    with claims_tried(monkeypatch) as tried:
        passed = other.run_once()
    assert passed.skipped_overlap == 1
    assert tried[: len(due) - 1] == due[1:]
    states = _states(ledger, due)
    assert states == {due[0]: _S.DISPATCHING} | {oid: _S.DUE for oid in due[1:]}
    with ledger.read() as session:
        skipped = session.scalar(select(func.count()).where(Occurrence.state == _S.SKIPPED_OVERLAP))
    assert skipped == 1
