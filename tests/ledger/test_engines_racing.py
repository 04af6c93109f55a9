"""Four engines on one ledger working the same backlog: an engine does not try claims it can see
another engine took (docs/decisions.md, "Engines side by side without racing for the same
backlog"). Both databases.

The engines' passes are nested, not timed: the first task of each engine starts the next
engine's pass (in the same thread), so the last engine runs every schedule the others are not
running yet, and each of the others then finds, when its loop comes to its next job, that job's
schedule already run. Once a claim of it has lost its race, a loop reads that once for all its
jobs left, and tries no claim of them; it used to try one claim of each (a write transaction each
on PostgreSQL, lost to the engine that ran it). An engine that has met no other does not read.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.clock import FixedClock
from core.engine import claim as claim_stage
from core.engine import run as run_stage
from core.engine import statements
from core.engine.engine import Engine, EngineOptions, PassReport
from core.engine.presence import announce
from core.engine.runner import RunResult
from core.ledger.db import Ledger
from core.ledger.models import Attempt, Occurrence
from core.ledger.publish import publish
from core.ledger.states import EngineKind, OccurrenceState
from core.spec.validation import parse_spec

from . import utc
from .test_dispatch_cost import EVERY_MINUTE

SCHEDULES = 8
DUE_EACH = 3
ENGINES = 4


def _due_backlogs(ledger: Ledger, clock: FixedClock) -> None:
    """``SCHEDULES`` schedules with ``DUE_EACH`` runs due each (caught up, none a misfire)."""
    start = utc("2026-03-02T00:00:00Z")
    clock.set(start)
    with ledger.write() as session:
        for i in range(SCHEDULES):
            data = {
                **EVERY_MINUTE,
                "scheduleId": f"backlog-{i}",
                "latenessWindow": "PT2H",
                "misfirePolicy": "CATCH_UP_ALL",
            }
            publish(session, parse_spec(data), clock)
    clock.set(start + timedelta(minutes=DUE_EACH - 1, seconds=30))


@contextmanager
def nested_passes(monkeypatch: pytest.MonkeyPatch, engines: list[Engine]) -> Iterator[dict[int, PassReport]]:
    """Tasks succeed at once; the first task run starts the second engine's pass, whose first
    task starts the third's, and so on (each pass waits for its tasks). The reports of the
    passes so started, by the engine's place in ``engines``."""
    waiting = list(enumerate(engines))[1:]
    reports: dict[int, PassReport] = {}

    def run_command(command: Any, timeout: Any, clock: FixedClock, **kwargs: Any) -> RunResult:
        started = clock.now()
        on_started = kwargs.get("on_started")
        if on_started is not None:
            on_started(0)
        if waiting:
            place, engine = waiting.pop(0)
            reports[place] = engine.run_once()
        return RunResult(started, clock.now(), 0, None, None, "", "", 0)

    monkeypatch.setattr(run_stage, "run_command", run_command)
    yield reports


@contextmanager
def lost_claims(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The claims sent to the ledger that claimed nothing (any engine's compare-and-set that found
    the occurrence changed since it was read): their occurrences."""
    lost: list[str] = []
    real = statements.try_claim

    def counted(session: Session, occurrence_id: str, *args: Any) -> Any:
        claimed = real(session, occurrence_id, *args)
        if claimed is None:
            lost.append(occurrence_id)
        return claimed

    monkeypatch.setattr(statements, "try_claim", counted)
    yield lost


def _announced(ledger: Ledger, clock: FixedClock) -> Engine:
    """An engine (one worker loop) announced on the ledger, as ``schedctl engine run`` starts one."""
    engine_id = announce(ledger, clock, EngineKind.HEADLESS)
    return Engine(ledger, clock, EngineOptions(max_workers=1), engine_id=engine_id)


def _attempts(ledger: Ledger) -> tuple[dict[OccurrenceState, int], set[int]]:
    """Occurrences by state, and the attempts' counts per occurrence."""
    with ledger.read() as session:
        states = dict(session.execute(select(Occurrence.state, func.count()).group_by(Occurrence.state)).all())
        per = set(session.scalars(select(func.count()).select_from(Attempt).group_by(Attempt.occurrence_id)))
    return {state: int(n) for state, n in states.items()}, per


def test_engines_that_find_the_backlog_run_by_another_try_no_claim_of_it(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _due_backlogs(ledger, clock)
    engines = [_announced(ledger, clock) for _ in range(ENGINES)]
    with nested_passes(monkeypatch, engines) as reports, lost_claims(monkeypatch) as lost:
        first = engines[0].run_once()
    assert len(reports) == ENGINES - 1
    started = [first.started, *(reports[place].started for place in range(1, ENGINES))]
    assert sum(started) == SCHEDULES * DUE_EACH
    # Each of the first three ran its own schedule's backlog; the last ran every other one.
    assert started == [DUE_EACH] * (ENGINES - 1) + [(SCHEDULES - ENGINES + 1) * DUE_EACH]
    # Each of the first three engines loses one claim to what another engine ran, then reads what
    # the others took once for the jobs it has left and claims none of them (it was one lost
    # claim per schedule left in each of their queues: 18).
    assert len(lost) <= ENGINES - 1
    states, per = _attempts(ledger)
    assert states.get(OccurrenceState.SUCCEEDED) == SCHEDULES * DUE_EACH
    assert states.get(OccurrenceState.DUE, 0) == 0
    assert per == {1}  # one attempt per occurrence: nothing ran twice
    assert all(not engine.busy() for engine in engines)


def test_an_engine_alone_does_not_read_what_others_took(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alone on the ledger, an engine meets no other's work: its loops start each job without the read."""
    _due_backlogs(ledger, clock)
    reads: list[int] = []
    real = claim_stage.taken_elsewhere

    def counted(session: Session, ctx: Any, queued: dict[str, list[str]]) -> set[str]:
        reads.append(len(queued))
        return real(session, ctx, queued)

    monkeypatch.setattr(claim_stage, "taken_elsewhere", counted)
    engine = _announced(ledger, clock)
    with nested_passes(monkeypatch, [engine]):
        report = engine.run_once()
    assert report.started == SCHEDULES * DUE_EACH
    assert reads == []
