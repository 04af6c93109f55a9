"""Two engines on one ledger and one schedule's backlog: the engine whose claim runs the
schedule works through its backlog (claiming the next with each outcome); a worker of the other
that finds an occurrence it read claimed since stops trying the rest, one careful claim (one
write transaction) instead of one per occurrence (docs/decisions.md, "A backlog another engine
runs"). Both databases."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

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
